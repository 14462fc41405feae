"""`minimax`: alpha-beta search with iterative deepening, a transposition table and move ordering.

Values are always from the root player's point of view: a node is a max node when the root
player moves there and a min node otherwise. So games where a player moves twice in a row (Dots
and Boxes' extra move) need nothing special, and with more than two players the search is
*paranoid* (every other seat is assumed to play against the root player), which is sound but
pessimistic. Games with hidden information are refused: a full-width search would read what its
seat may not see (use `mcts` there). Perfect-information games with chance are searched as if
deterministic from the view (a clone): exact when chance is only in the set-up, as in Onitama.

Search:
- iterative deepening 1, 2, ... up to `depth` plies (one ply = one action), or, with `time` > 0,
  as deep as the time allows; every iteration seeds the next one's move ordering;
- fail-hard alpha-beta; at each node the transposition-table move is tried first (before the
  other moves are even generated), then the two killer moves of that ply, then the rest by the
  history heuristic (`order=eval`: by the static evaluation of the children instead, at nodes
  with 2+ plies left: measured slower, see `_ordered`). The root is ordered by static evaluation
  on the first iteration, then by the previous iteration's best moves. Leaves are evaluated in
  their parent's loop (no call per leaf). Principal variation search was tried and visited more
  nodes on the benchmark positions, so it is not used;
- transposition table keyed by a cheap per-game state key (`agents._search.make_state_key`: the
  state's own `key()` if it has one, else a tuple of its attributes; `tt=render` or `tt=off` for
  comparison: on bench/search.py the attribute/own key is the fastest), kept between the moves
  of a match (it is cleared past TT_LIMIT entries);
- terminal positions score WIN_VALUE times the root player's margin, plus the plies left so a
  quicker win (or a later loss) is preferred;
- ties among the best root moves are broken by the seeded RNG: after the first root move, the
  others are searched with alpha just below the best value, so a move that equals it is seen.

Time: with `time` > 0, or whenever the runner sets `time_per_move`, the search stops at the
deadline min(time, time_per_move - 0.03 s - 10%) and answers the best move of the deepest
finished iteration (or the better move found in the unfinished one: its first move is the previous
best, so anything that beat it is at least as good).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import arena
from agents._search import (
    agent_params,
    clock,
    deadline_from,
    explicit_eval,
    make_state_key,
    render_key,
    require_perfect_information,
    resolve_evaluation,
    terminal_value,
    time_budget,
)
from agents.linear_weights import WeightsText, weights_files, weights_fingerprint
from arena.api import Evaluation
from arena.heap import collector_paused
from arena.params import MAX_TIME_PER_MOVE

EXACT, LOWER, UPPER = 0, 1, 2
#: Time mode stops deepening here even if the game is not solved.
MAX_DEPTH = 64
#: With order=eval, children are ordered by their static evaluation at nodes with at least this
#: many plies left (below that the subtrees are too small to pay for the evaluations).
EVAL_ORDER_DEPTH = 2
#: The table is cleared when it grows past this many entries (memory stays bounded in long matches).
TT_LIMIT = 2_000_000
#: Root values within this fraction of the best count as equal for the random tie-break
#: (sums of float products differ in the last bits with the order of the terms).
TIE_EPSILON = 1e-12


def _first(item: tuple[float, int, arena.State]) -> float:
    return item[0]


class _Timeout(Exception):
    """Raised inside the search when the deadline passes; unwinds to the root."""


def _validated(params: dict[str, Any]) -> dict[str, Any]:
    return agent_params(MinimaxAgent.info, params)


class MinimaxAgent(arena.Agent):
    info = arena.AgentInfo(
        id="minimax",
        version="1",
        description="Alpha-beta with iterative deepening, transposition table, TT-move/killer/history ordering; "
        "paranoid for more than two players.",
        params=(
            arena.Param("depth", 3, "search depth in plies (ignored when time > 0)", min=1, max=MAX_DEPTH),
            arena.Param("time", 0.0, "seconds per move: deepen until it runs out (0 = fixed depth)", min=0.0,
                        max=MAX_TIME_PER_MOVE),  # fmt: skip
            arena.Param("eval", "", "evaluation: one of the game's evaluations, 'linear', or 'model' (default: heuristic)"),
            arena.Param("model", "", "network file for eval=model: its value output (or best Q) at the leaves"),
            arena.Param("weights", WeightsText(), "weights for eval=linear, one per game feature, or a weights file",
                        type=WeightsText),  # fmt: skip
            arena.Param("tt", "auto", "transposition-table key", choices=("auto", "render", "off")),
            arena.Param("order", "history", "after the table's move: killers+history, or static evaluation",
                        choices=("history", "eval")),  # fmt: skip
        ),
    )

    @classmethod
    def check_game(cls, game: arena.Game, params: dict[str, Any]) -> None:
        values = _validated(params)
        require_perfect_information(cls.info.id, game)
        if values["eval"] == "model":
            from agents.models.evaluator import require_model_game

            require_model_game(cls.info.id, game, values["model"])
        else:
            if values["model"]:
                raise arena.ArenaError(f"agent '{cls.info.id}': model=FILE is for eval=model")
            resolve_evaluation(cls.info.id, game, values["eval"], values["weights"] or None)

    @classmethod
    def canonical_params(cls, game: arena.Game, params: dict[str, Any]) -> dict[str, Any]:
        return explicit_eval(params)

    @classmethod
    def files(cls, params: Mapping[str, str]) -> tuple[str, ...]:
        return ((params["model"],) if params.get("model") else ()) + weights_files(params)

    @classmethod
    def fingerprint(cls, params: dict[str, Any]) -> str:
        from agents.models.evaluator import model_fingerprint

        return model_fingerprint(params) if params.get("model") else weights_fingerprint(_validated(params))

    def __init__(self, game: arena.Game, player: int, seed: int, **params: Any) -> None:
        super().__init__(game, player, seed, **params)
        values = self.params  # validated by Agent.__init__, defaults filled in
        require_perfect_information(self.info.id, game)
        self.depth: int = values["depth"]
        self.time: float = values["time"]
        self.tt_mode: str = values["tt"]
        self.eval_order: bool = values["order"] == "eval"
        self.network = None
        if values["eval"] == "model":
            from agents.models.evaluator import NetworkEvaluator

            self.network = NetworkEvaluator(game, values["model"])
            self.evaluate: Evaluation = self.network.value
        else:
            self.evaluate = resolve_evaluation(self.info.id, game, values["eval"], values["weights"] or None)
        self.reset()

    def reset(self) -> None:
        self.table: dict[Hashable, tuple[int, float, int, int]] = {}
        self.key: Callable[[arena.State], Hashable] | None = None
        self.key_ready = False
        #: Statistics of the last `act`, for benchmarks: nodes visited, depth finished, seconds.
        self.stats: dict[str, float] = {}
        #: The root moves judged equal best by the last `act` (the answer is drawn from them).
        self.best_moves: list[int] = []
        self.root_value = 0.0

    # --- the root ---------------------------------------------------------------------------

    def act(self, state: arena.State) -> int:
        with collector_paused():  # a full collection mid-search could overrun time_per_move
            return self._act(state)

    def _act(self, state: arena.State) -> int:
        start = clock()
        actions = state.legal_actions()
        if len(actions) == 1:
            self.stats = {"nodes": 0, "depth": 0, "seconds": clock() - start}
            self.best_moves = actions
            return actions[0]
        if not self.key_ready:
            self.key = make_state_key(state, self.tt_mode)
            self.key_ready = True
        if len(self.table) > TT_LIMIT:
            self.table.clear()
        self.deadline = deadline_from(time_budget(self.time, self.time_per_move), start)
        self.root_player = state.current_player
        self.nodes = 0
        self.killers: dict[int, list[int]] = {}
        # History scores by action id (a list: sorting by history.__getitem__ needs no lambda).
        self.history = [0] * self.game.num_distinct_actions
        max_depth = MAX_DEPTH if self.time > 0 else self.depth

        order = self._static_order(state, actions)
        best_moves = order[:1]
        finished = 0
        for depth in range(1, max_depth + 1):
            self.cut_by_depth = False
            try:
                best_moves = self._root(state, order, depth)
            except _Timeout as stop:
                partial = stop.args[0] if stop.args else None
                if partial:
                    best_moves = partial
                break
            finished = depth
            # Next iteration: this one's best moves first, the others in their previous order.
            order = best_moves + [a for a in order if a not in best_moves]
            if not self.cut_by_depth:
                break  # every line reached the end of the game: deeper search changes nothing
        self.stats = {"nodes": self.nodes, "depth": finished, "seconds": clock() - start, "value": self.root_value}
        self.best_moves = best_moves
        return best_moves[0] if len(best_moves) == 1 else self.rng.choice(best_moves)

    def _root(self, state: arena.State, order: list[int], depth: int) -> list[int]:
        """Search every root move to `depth`; returns the moves whose value equals the best.

        After the first move, each move is searched with alpha just below the best value so far
        (a window of 2*tol, tol relative to the value): a fail-low (value <= alpha) is worse, anything
        above alpha is an exact value, equal to the best within tol or better.
        """
        best_value = -float("inf")
        best: list[int] = []
        inf = float("inf")
        for action in order:
            child = state.clone()
            child.apply(action)
            tol = TIE_EPSILON * max(1.0, abs(best_value)) if best else 0.0
            alpha = best_value - 2 * tol if best else -inf
            try:
                value = self._child_value(child, depth - 1, alpha, inf, 1)
            except _Timeout:
                raise _Timeout(best) from None
            if not best or value > best_value + tol:
                best_value, best = value, [action]
            elif value > alpha:
                best.append(action)
        self.root_value = best_value
        return best

    def _static_order(self, state: arena.State, actions: list[int]) -> list[int]:
        """Root order for the first iteration: best static evaluation first."""
        scored = []
        for action in actions:
            child = state.clone()
            child.apply(action)
            scored.append((self._static_value(child, 0), action))
        scored.sort(key=lambda item: -item[0])
        return [a for _, a in scored]

    def _static_value(self, child: arena.State, depth: int) -> float:
        """Evaluation of `child` for the root player; finished games by result, quicker wins higher."""
        if child.current_player < 0:
            value = terminal_value(child.returns(), self.root_player)
            return value + depth if value > 0 else value - depth if value < 0 else value
        return self.evaluate(child, self.root_player)

    # --- the tree ---------------------------------------------------------------------------

    def _child_value(self, child: arena.State, depth: int, alpha: float, beta: float, ply: int) -> float:
        if depth <= 0 or child.current_player < 0:
            self.nodes += 1
            if child.current_player >= 0:
                self.cut_by_depth = True
            return self._static_value(child, depth)
        return self._search(child, depth, alpha, beta, ply)

    def _search(self, state: arena.State, depth: int, alpha: float, beta: float, ply: int) -> float:
        """Fail-hard alpha-beta value of non-terminal `state` (depth >= 1) for the root player."""
        self.nodes += 1
        if clock() > self.deadline:
            raise _Timeout()
        maximise = state.current_player == self.root_player

        key = None
        tt_move = -1
        keyer = self.key
        if keyer is not None:
            try:
                key = keyer(state)
                entry = self.table.get(key)
            except (TypeError, AttributeError):
                # The attribute key met a kind it was not built for: use the general one from now on.
                self.key = keyer = render_key
                self.table.clear()
                key = keyer(state)
                entry = None
            if entry is not None:
                e_depth, e_value, e_flag, tt_move = entry
                if e_depth >= depth:
                    if e_flag == EXACT or (e_flag == LOWER and e_value >= beta) or (e_flag == UPPER and e_value <= alpha):
                        self.cut_by_depth = True  # the stored search may have stopped short of the end
                        return min(max(e_value, alpha), beta)

        alpha0, beta0 = alpha, beta
        best_move = -1
        best_value = -math.inf if maximise else math.inf
        children: list[arena.State] | None = None

        # The table's move first, before the other moves are generated and ordered.
        if tt_move >= 0:
            child = state.clone()
            child.apply(tt_move)
            best_value = self._child_value(child, depth - 1, alpha, beta, ply + 1)
            best_move = tt_move
            if maximise:
                alpha = max(alpha, best_value)
            else:
                beta = min(beta, best_value)
        if alpha < beta:
            actions, children = self._ordered(state, depth, ply, maximise, tt_move)
            if depth == 1 and children is None:
                # Children are leaves: evaluate them here, without a call per leaf.
                best_value, best_move = self._frontier(state, actions, maximise, alpha, beta, best_value, best_move, ply)
            else:
                for i, action in enumerate(actions):
                    if children is not None:
                        child = children[i]
                    else:
                        child = state.clone()
                        child.apply(action)
                    value = self._child_value(child, depth - 1, alpha, beta, ply + 1)
                    if maximise:
                        if value > best_value:
                            best_value, best_move = value, action
                            if value > alpha:
                                alpha = value
                    elif value < best_value:
                        best_value, best_move = value, action
                        if value < beta:
                            beta = value
                    if alpha >= beta:
                        self._remember_cutoff(action, ply, depth)
                        break

        if key is not None:
            flag = UPPER if best_value <= alpha0 else LOWER if best_value >= beta0 else EXACT
            self.table[key] = (depth, best_value, flag, best_move)
        return min(max(best_value, alpha0), beta0)

    def _frontier(
        self, state: arena.State, actions: list[int], maximise: bool, alpha: float, beta: float,
        best_value: float, best_move: int, ply: int,
    ) -> tuple[float, int]:  # fmt: skip
        """The loop of a depth-1 node: every child is a leaf, valued by evaluation or result."""
        root = self.root_player
        evaluate = self.evaluate
        leaves = 0
        children: list[arena.State] | None = None
        if self.network is not None:  # a network values the whole frontier in one forward pass
            children = []
            for action in actions:
                child = state.clone()
                child.apply(action)
                children.append(child)
            values = iter(self.network.values([c for c in children if c.current_player >= 0], root))
        for index, action in enumerate(actions):
            if children is None:
                child = state.clone()
                child.apply(action)
            else:
                child = children[index]
            leaves += 1
            if child.current_player < 0:
                value = terminal_value(child.returns(), root)
            else:
                self.cut_by_depth = True
                value = evaluate(child, root) if children is None else next(values)
            if maximise:
                if value > best_value:
                    best_value, best_move = value, action
                    if value >= beta:
                        self._remember_cutoff(action, ply, 1)
                        break
            elif value < best_value:
                best_value, best_move = value, action
                if value <= alpha:
                    self._remember_cutoff(action, ply, 1)
                    break
        self.nodes += leaves
        return best_value, best_move

    def _ordered(
        self, state: arena.State, depth: int, ply: int, maximise: bool, skip: int
    ) -> tuple[list[int], list[arena.State] | None]:
        """The moves to try after the table's move (`skip`), best first; with the children already
        made when they were made for ordering.

        order=history (default): the two killers of this ply first, then by the history heuristic.
        order=eval: at depth >= EVAL_ORDER_DEPTH, by the static evaluation of the children.
        With iterative deepening most interior nodes already have a table move, and evaluating
        every child costs more than it prunes: on the bench/search.py positions order=eval visits
        about as many nodes and takes 5-25% longer (connect four, Reversi, Santorini).
        """
        actions = list(state.legal_actions())  # our own copy: it is sorted and edited below
        if skip >= 0:
            actions.remove(skip)
        if self.eval_order and depth >= EVAL_ORDER_DEPTH and len(actions) > 1:
            scored = []
            sign = 1.0 if maximise else -1.0
            for action in actions:
                child = state.clone()
                child.apply(action)
                scored.append((sign * self._static_value(child, depth - 1), action, child))
            scored.sort(key=_first, reverse=True)
            return [a for _, a, _ in scored], [c for _, _, c in scored]
        actions.sort(key=self.history.__getitem__, reverse=True)
        for killer in reversed(self.killers.get(ply, ())):  # the latest killer ends up first
            if killer in actions and actions[0] != killer:
                actions.remove(killer)
                actions.insert(0, killer)
        return actions, None

    def _remember_cutoff(self, action: int, ply: int, depth: int) -> None:
        killers = self.killers.setdefault(ply, [])
        if action not in killers:
            killers.insert(0, action)
            del killers[2:]
        self.history[action] += depth * depth


@arena.hookimpl
def register_agents(register):
    register(MinimaxAgent)
