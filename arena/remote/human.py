"""People as players: agent type `human` plays a seat from the terminal (standard input and output).

It shows the position (`render()` of the seat's view, so a hidden hand stays hidden), lists the
legal moves by name, reads one (its name, or its action id), refuses an illegal one and asks again.
`arena play` seats it against any agent in a one-match tournament: stored and rated like any other.
"""

from __future__ import annotations

import sys
from typing import Any

from arena import hookimpl
from arena.api import Agent, AgentInfo, State
from arena.errors import ArenaError
from arena.match import AGENT_DISCONNECTED, Forfeit, MatchResult
from arena.params import Param


class HumanAgent(Agent):
    info = AgentInfo(
        id="human", version="1", description="a person at the terminal: sees the board and the legal moves, types one",
        params=(Param("name", "human", "who plays (ratings are kept per name)"),),
    )  # fmt: skip
    person = True

    def _say(self, text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def act(self, state: State) -> int:
        legal = state.legal_actions()
        names = [state.action_to_string(a) for a in legal]
        self._say(f"\n{state.render()}\n")
        self._say(f"{self.params['name']} (seat {self.player}), your move: " + ", ".join(names))
        while True:
            sys.stdout.write("move> ")
            sys.stdout.flush()
            line = sys.stdin.readline()
            if not line:  # end of input: the person left
                raise Forfeit(AGENT_DISCONNECTED, f"seat {self.player}: no more input from {self.params['name']}")
            text = line.strip()
            if not text:
                continue
            try:
                action = state.string_to_action(text)
            except ArenaError as exc:
                self._say(f"not a legal move ({exc}); choose one of: " + ", ".join(names))
                continue
            if action in legal:
                return action
            self._say(f"{text!r} is not a legal move; choose one of: " + ", ".join(names))

    def end(self, result: MatchResult) -> None:
        outcome = {"win": "You win", "draw": "A draw", "loss": "You lose"}[result.outcomes[self.player]]
        how = "" if result.reason == "normal" else f" ({result.reason}: {result.detail})" if result.detail else f" ({result.reason})"
        self._say(f"\n{outcome} after {result.turns} move{'' if result.turns == 1 else 's'}{how}.")


@hookimpl
def register_agents(register: Any) -> None:
    register(HumanAgent)
