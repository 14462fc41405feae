"""`mcts`: Monte Carlo tree search with UCB1 selection, for any number of players.

Each simulation: select with UCB1 (mean return + c * sqrt(ln N / n)) from the root while every
action of a node has been tried; expand one untried action (picked at random); play out to the
end of the game; add the game's `returns()` along the path. A node's statistics maximise the
return of the player who chooses there (max-n), so two or N players, and turns that do not
alternate (a player who moves again), need nothing special. The answer is the most visited root
action (ties by the seeded RNG). Returns are the game's `returns()`; in UCB1 the mean is divided
by the largest absolute return seen so far in the search (at least 1), so for games that score
+1/-1 nothing changes and for games that score points (Incan Gold's gems) `c` keeps its meaning.
The tree is rebuilt at each move.

Play-outs (`rollout`):
- `random` (default): uniform legal actions;
- `heuristic`: epsilon-greedy by the game's heuristic: with probability `epsilon` a uniform
  action, else the action whose resulting state the heuristic rates best for the mover (ties at
  random). Every step clones each child, so a play-out costs roughly (branching factor) times a
  random one; fewer, better-informed simulations.

Budget: `simulations` per move, or with `time` > 0 as many as fit in `time` seconds; when the
runner sets `time_per_move`, never more than time_per_move - 0.03 s - 10%.

Two implementations of the same algorithm:
- perfect information (connect four, Reversi, Santorini, Onitama...): nodes are small lists,
  each keeping its legal actions, untried actions and per-child visit counts and value sums
  (stored in the parent, from the point of view of the player who chooses there); one clone of the
  root per simulation, actions applied down the tree. A perfect-information game with chance is
  searched from its view (a clone, RNG included), so the same actions lead to the same state in
  every simulation (exact for Onitama, whose only chance is the deal);
- hidden information (Incan Gold, Gwent Lite...): information-set MCTS "lite". Each
  simulation starts from a fresh determinisation `view.view(self.player)` of the seat's view, so
  the search never uses what the seat may not see. The tree is keyed by action sequences: a node
  maps actions to children, each child keeps a value sum per player; at each node the player to
  move and the legal actions are taken from the current determinisation, and UCB1 chooses among
  the children legal in it (parent count = the node's visits).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import arena
from agents._search import agent_params, clock, deadline_from, explicit_eval, resolve_evaluation, terminal_value, time_budget
from arena.api import Evaluation
from arena.heap import collector_paused
from arena.params import MAX_TIME_PER_MOVE

#: A play-out stops after this many actions (or the game's max_game_length) even if the game is
#: not over, and counts the state's returns() there (a draw for most games): some games can cycle.
ROLLOUT_LIMIT = 1000
#: The most simulations a move may ask for (hours of search on one core): more is a mistake, not a budget.
MAX_SIMULATIONS = 10_000_000

# Fast-path node layout (a list, for speed): visits, per-child visits, per-child value sums,
# children (made in the order of `acts`), the actions of those children, untried actions, and
# the player who chooses at the node (-1 at the end of the game).
_N, _CN, _CW, _KIDS, _ACTS, _UNTRIED, _PLAYER = range(7)


def _validated(params: dict[str, Any]) -> dict[str, Any]:
    return agent_params(MCTSAgent.info, params)


class MCTSAgent(arena.Agent):
    info = arena.AgentInfo(
        id="mcts",
        version="1",
        description="UCB1 Monte Carlo tree search (max-n for N players; determinised IS-MCTS-lite for hidden information).",
        params=(
            arena.Param("simulations", 1000, "simulations per move (ignored when time > 0)", min=1, max=MAX_SIMULATIONS),
            arena.Param("time", 0.0, "seconds per move (0 = use simulations)", min=0.0, max=MAX_TIME_PER_MOVE),
            arena.Param("c", math.sqrt(2), "UCB1 exploration constant", min=0.0),
            arena.Param("rollout", "random", "play-out policy", choices=("random", "heuristic")),
            arena.Param("epsilon", 0.1, "random-action probability of rollout=heuristic", min=0.0, max=1.0),
            arena.Param("eval", "", "evaluation for rollout=heuristic (default: the game's heuristic)"),
            arena.Param("model", "", "network file: PUCT with its priors and values instead of UCB1 and play-outs"),
            arena.Param("c_puct", 1.5, "PUCT exploration constant (with model)", min=0.0),
            arena.Param("leaf_batch", 8, "leaves valued per forward pass (with model)", min=1, max=1024),
        ),
    )

    @classmethod
    def check_game(cls, game: arena.Game, params: dict[str, Any]) -> None:
        values = _validated(params)
        if values["model"]:
            from agents.models.evaluator import require_model_game

            if not game.info.perfect_information:
                raise arena.ArenaError(f"agent '{cls.info.id}' with a model searches perfect-information games only, not '{game.info.id}'")
            require_model_game(cls.info.id, game, values["model"])
        if values["rollout"] == "heuristic":
            resolve_evaluation(cls.info.id, game, values["eval"], None)

    @classmethod
    def canonical_params(cls, game: arena.Game, params: dict[str, Any]) -> dict[str, Any]:
        return explicit_eval(params)

    @classmethod
    def files(cls, params: Mapping[str, str]) -> tuple[str, ...]:
        return (params["model"],) if params.get("model") else ()

    @classmethod
    def fingerprint(cls, params: dict[str, Any]) -> str:
        from agents.models.evaluator import model_fingerprint

        return model_fingerprint(params) if params.get("model") else ""

    def __init__(self, game: arena.Game, player: int, seed: int, **params: Any) -> None:
        super().__init__(game, player, seed, **params)
        values = self.params  # validated by Agent.__init__, defaults filled in
        self.simulations: int = values["simulations"]
        self.time: float = values["time"]
        self.c: float = values["c"]
        self.epsilon: float = values["epsilon"]
        self.evaluate: Evaluation | None = None
        if values["rollout"] == "heuristic":
            self.evaluate = resolve_evaluation(self.info.id, game, values["eval"], None)
        self.determinise = not game.info.perfect_information
        self.puct = None
        if values["model"]:
            from agents.puct import PUCTSearch

            self.puct = PUCTSearch(game, values["model"], values["c_puct"], values["leaf_batch"])
        bound = game.max_game_length()
        self.rollout_limit = ROLLOUT_LIMIT if bound is None else min(bound, ROLLOUT_LIMIT)
        #: Statistics of the last `act`, for benchmarks: simulations run and seconds.
        self.stats: dict[str, float] = {}

    def act(self, state: arena.State) -> int:
        with collector_paused():  # a full collection mid-search could overrun time_per_move
            return self._act(state)

    def _act(self, state: arena.State) -> int:
        start = clock()
        actions = state.legal_actions()
        if len(actions) == 1:
            self.stats = {"simulations": 0, "seconds": clock() - start}
            return actions[0]
        deadline = deadline_from(time_budget(self.time, self.time_per_move), start)
        limit = 1 << 62 if self.time > 0 else self.simulations
        if self.puct is not None:
            visits, done = self.puct.search(state, limit, deadline)
        elif self.determinise:
            visits, done = self._search_determinised(state, limit, deadline)
        else:
            visits, done = self._search(state, limit, deadline)
        most = max(visits.values(), default=0)  # no simulation at all if the deadline came first
        best = [a for a in actions if visits.get(a, 0) == most]
        self.stats = {"simulations": done, "seconds": clock() - start}
        return best[0] if len(best) == 1 else self.rng.choice(best)

    def root_value(self, state: arena.State) -> float:
        """The mean return, for the player to move in `state`, of `simulations` UCB1 simulations from it (perfect
        information, play-outs): the value the Santorini report's search trees gave their nodes, which `arena train
        --algorithm value --targets mcts:...` learns. `state` is not finished."""
        root, _done = self._search_tree(state, self.simulations, math.inf)
        return float(sum(root[_CW])) / root[_N] if root[_N] else 0.0

    # --- play-outs --------------------------------------------------------------------------

    def _rollout(self, state: arena.State) -> None:
        """Play `state` to its end in place."""
        if self.evaluate is not None:
            self._heuristic_rollout(state)
            return
        rnd = self.rng.random
        legal = state.legal_actions
        apply = state.apply
        for _ in range(self.rollout_limit):
            if state.current_player < 0:
                break
            acts = legal()
            apply(acts[int(rnd() * len(acts))])

    def _heuristic_rollout(self, state: arena.State) -> None:
        rnd = self.rng.random
        epsilon = self.epsilon
        evaluate = self.evaluate
        assert evaluate is not None
        for _ in range(self.rollout_limit):
            if state.current_player < 0:
                break
            acts = state.legal_actions()
            if len(acts) == 1 or rnd() < epsilon:
                state.apply(acts[int(rnd() * len(acts))])
                continue
            mover = state.current_player
            best_value = -math.inf
            best: list[int] = []
            for action in acts:
                child = state.clone()
                child.apply(action)
                if child.current_player < 0:
                    value = terminal_value(child.returns(), mover)
                else:
                    value = evaluate(child, mover)
                if value > best_value:
                    best_value, best = value, [action]
                elif value == best_value:
                    best.append(action)
            state.apply(best[0] if len(best) == 1 else best[int(rnd() * len(best))])

    # --- perfect information ----------------------------------------------------------------

    def _new_node(self, state: arena.State) -> list[Any]:
        player = state.current_player
        # A copy: the node pops from its untried list, and a game may hand out a cached list.
        untried = list(state.legal_actions()) if player >= 0 else []
        return [0, [], [], [], [], untried, player]

    def _search(self, root_state: arena.State, limit: int, deadline: float) -> tuple[dict[int, int], int]:
        """UCT on a deterministic perfect-information game; returns the root's visit counts."""
        root, done = self._search_tree(root_state, limit, deadline)
        return dict(zip(root[_ACTS], root[_CN])), done

    def _search_tree(self, root_state: arena.State, limit: int, deadline: float) -> tuple[list[Any], int]:
        """UCT on a deterministic perfect-information game; returns the root node and the simulations run."""
        rnd = self.rng.random
        sqrt, log = math.sqrt, math.log
        c2 = self.c * self.c
        rollout = self._rollout
        new_node = self._new_node
        root = new_node(root_state)
        bound = 1.0  # the largest absolute return seen: UCB1 divides means by it
        done = 0
        timed = deadline != math.inf
        while done < limit:
            if timed and clock() > deadline:
                break
            state = root_state.clone()
            apply = state.apply
            node = root
            path: list[tuple[list[Any], int]] = []
            while True:
                untried = node[_UNTRIED]
                if untried:
                    # Expand: a random untried action becomes a child, then play out from it.
                    i = int(rnd() * len(untried))
                    action = untried[i]
                    untried[i] = untried[-1]
                    untried.pop()
                    apply(action)
                    child = new_node(state)
                    node[_KIDS].append(child)
                    node[_ACTS].append(action)
                    node[_CN].append(0)
                    node[_CW].append(0.0)
                    path.append((node, len(node[_KIDS]) - 1))
                    if state.current_player >= 0:
                        rollout(state)
                    break
                kids = node[_KIDS]
                if not kids:
                    break  # the end of the game
                # UCB1: mean + c*sqrt(ln N / n) = mean + sqrt(c^2 ln N / n).
                cn = node[_CN]
                cw = node[_CW]
                scale = c2 * log(node[_N])
                inv = 1.0 / bound
                best_i = 0
                best_u = -math.inf
                for i in range(len(cn)):
                    n = cn[i]
                    u = cw[i] * inv / n + sqrt(scale / n)
                    if u > best_u:
                        best_u = u
                        best_i = i
                path.append((node, best_i))
                apply(node[_ACTS][best_i])
                node = kids[best_i]
            returns = state.returns()
            for r in returns:
                if r > bound or -r > bound:
                    bound = abs(r)
            for parent, i in path:
                parent[_N] += 1
                parent[_CN][i] += 1
                parent[_CW][i] += returns[parent[_PLAYER]]
            done += 1
        return root, done

    # --- hidden information or chance -------------------------------------------------------

    def _search_determinised(
        self, view: arena.State, limit: int, deadline: float
    ) -> tuple[dict[int, int], int]:
        """IS-MCTS-lite: a fresh determinisation per simulation, a tree keyed by action sequences.

        A node is [visits, {action: child}, value sums per player]; a child's visits and sums
        are those of its own node.
        """
        rnd = self.rng.random
        sqrt, log = math.sqrt, math.log
        c2 = self.c * self.c
        me = self.player
        num_players = self.game.num_players
        root: list[Any] = [0, {}, [0.0] * num_players]
        bound = 1.0  # the largest absolute return seen: UCB1 divides means by it
        done = 0
        timed = deadline != math.inf
        while done < limit:
            if timed and clock() > deadline:
                break
            state = view.view(me)
            node = root
            path = [root]
            while state.current_player >= 0:
                legal = state.legal_actions()
                kids = node[1]
                untried = [a for a in legal if a not in kids]
                if untried:
                    action = untried[int(rnd() * len(untried))]
                    child = [0, {}, [0.0] * num_players]
                    kids[action] = child
                    state.apply(action)
                    path.append(child)
                    self._rollout(state)
                    break
                mover = state.current_player
                scale = c2 * log(node[0]) if node[0] > 0 else 0.0
                inv = 1.0 / bound
                best_a = legal[0]
                best_u = -math.inf
                for a in legal:
                    kid = kids[a]
                    n = kid[0]
                    u = kid[2][mover] * inv / n + sqrt(scale / n)
                    if u > best_u:
                        best_u = u
                        best_a = a
                state.apply(best_a)
                node = kids[best_a]
                path.append(node)
            returns = state.returns()
            for r in returns:
                if r > bound or -r > bound:
                    bound = abs(r)
            for visited in path:
                visited[0] += 1
                sums = visited[2]
                for p in range(num_players):
                    sums[p] += returns[p]
            done += 1
        return {a: kid[0] for a, kid in root[1].items()}, done


@arena.hookimpl
def register_agents(register):
    register(MCTSAgent)
