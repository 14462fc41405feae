"""PUCT tree search guided by a network (AlphaZero-style), used by `mcts` when it is given `model=FILE`.

Each simulation descends from the root by PUCT: the child maximising Q + c_puct * P * sqrt(N) / (1 + n)
(Q: mean value for the seat choosing there, 0 before any visit; P: the network's softmax over the
legal actions; N, n: visits of the node and the child). The first position off the tree is valued
by the network (its value output, or its best legal Q-value; a finished game by its returns) and
becomes a node with the network's priors: no random play-outs. Values are backed up as the
chooser's view (two players: the other seat's value is the negation).

Leaves are evaluated `leaf_batch` at a time in one forward pass: the simulations of a batch
descend with a virtual loss (each visit counts as a loss until its value is known), so they
spread over different leaves. The answer is the most visited root action (ties by the seeded RNG).
"""

from __future__ import annotations

import math
from typing import Any

import arena
from agents._search import clock
from agents.models.evaluator import NetworkEvaluator, priors


class Node:
    __slots__ = ("actions", "children", "n", "player", "priors", "visits", "w")

    def __init__(self, player: int, actions: list[int], prior: list[float]) -> None:
        self.player = player  # the seat choosing here; -1 when the game is over
        self.actions = actions
        self.priors = prior
        self.children: list[Node | None] = [None] * len(actions)
        self.n = [0] * len(actions)
        self.w = [0.0] * len(actions)  # value sums for `player`
        self.visits = 0


def _terminal() -> Node:
    return Node(-1, [], [])


class PUCTSearch:
    def __init__(self, game: arena.Game, model_path: str, c_puct: float, leaf_batch: int) -> None:
        self.network = NetworkEvaluator(game, model_path)
        self.c_puct = c_puct
        self.leaf_batch = leaf_batch

    def _expand(self, states: list[arena.State]) -> list[tuple[Node, float]]:
        """New nodes for positions off the tree, with the value for the seat to move there."""
        out: list[tuple[Node, float]] = [(_terminal(), 0.0)] * len(states)
        live = [i for i, s in enumerate(states) if s.current_player >= 0]
        for i, (outputs, value) in zip(live, self.network.infer([states[i] for i in live])):
            legal = list(states[i].legal_actions())
            out[i] = (Node(states[i].current_player, legal, priors(outputs, legal)), value)
        return out

    def _select(self, node: Node) -> int:
        scale = self.c_puct * math.sqrt(max(node.visits, 1))
        n, w, p = node.n, node.w, node.priors
        best_i, best_u = 0, -math.inf
        for i in range(len(n)):
            u = (w[i] / n[i] if n[i] else 0.0) + scale * p[i] / (1 + n[i])
            if u > best_u:
                best_i, best_u = i, u
        return best_i

    def search(self, root_state: arena.State, limit: int, deadline: float) -> tuple[dict[int, int], int]:
        """Visit counts of the root's actions after `limit` simulations (or at the deadline)."""
        (root, _value), = self._expand([root_state.clone()])
        done = 0
        timed = deadline != math.inf
        while done < limit and not (timed and clock() > deadline):
            self._batch(root_state, root, min(self.leaf_batch, limit - done))
            done += min(self.leaf_batch, limit - done)
        return dict(zip(root.actions, root.n)), done

    def _batch(self, root_state: arena.State, root: Node, count: int) -> None:
        paths: list[list[tuple[Node, int]]] = []
        leaves: list[arena.State] = []
        finished: list[tuple[list[tuple[Node, int]], list[float]]] = []  # paths ending in a finished game
        pending: dict[tuple[int, int], int] = {}  # (node id, child index) -> leaf number, so a leaf is made once
        shared: list[tuple[list[tuple[Node, int]], int]] = []  # further paths to a leaf of this batch
        for _ in range(count):
            state = root_state.clone()
            node, path = root, []
            while True:
                i = self._select(node)
                path.append((node, i))
                node.n[i] += 1  # virtual loss: a visit that counts as a loss until its value is known
                node.w[i] -= 1.0
                node.visits += 1
                state.apply(node.actions[i])
                child = node.children[i]
                if child is None or child.player < 0:
                    break
                node = child
            last, index = path[-1]
            child = last.children[index]
            if child is not None:  # a finished game already in the tree
                finished.append((path, state.returns()))
            elif (id(last), index) in pending:
                shared.append((path, pending[(id(last), index)]))
            else:
                pending[(id(last), index)] = len(leaves)
                paths.append(path)
                leaves.append(state)
        made = self._expand(leaves)
        results: list[tuple[int, float] | list[float]] = []
        for path, state, (node, value) in zip(paths, leaves, made):
            last, index = path[-1]
            last.children[index] = node
            results.append(state.returns() if node.player < 0 else (node.player, value))
        for path, outcome in [*zip(paths, results), *finished, *((p, results[k]) for p, k in shared)]:
            self._backup(path, outcome)

    @staticmethod
    def _backup(path: list[tuple[Node, int]], outcome: Any) -> None:
        """Undo the virtual loss and add the value for each chooser: `outcome` is the finished game's
        returns, or (seat to move at the leaf, the network's value for it)."""
        for node, i in path:
            if isinstance(outcome, tuple):
                mover, value = outcome
                mine = value if node.player == mover else -value
            else:
                mine = outcome[node.player]
            node.w[i] += 1.0 + mine
