"""People as players in the browser: agent type `browser` plays a seat for a person signed in to `arena serve`.

It is a pull agent (arena.remote.pull) whose "bot" is the person's play page: the server's hub routes
its `start`, `act` and `end` messages to the page's table (arena.server.play) under the hub name
`browser:NAME`, and the person's clicks come back as answers, so a person's moves arrive like a
remote agent's (same deadline, same faults). Each `act` also carries `view`: the position drawn
from this seat's point of view (`State.view(seat)` for hidden information, as the runner gives it),
SVG where the game draws one, else text; never what the seat may not see. An answer
`{"leave": REASON}` forfeits the match (`agent_disconnected`): the person left.
"""

from __future__ import annotations

import json
from typing import Any

from arena import hookimpl
from arena.api import AgentInfo, Game, State
from arena.library.matches import render_svg, render_text
from arena.match import AGENT_DISCONNECTED, Forfeit
from arena.params import MAX_TIME_PER_MOVE, Param, check_name
from arena.remote.pull import PullAgent

#: Seconds a person has for a move (the `timeout` parameter's default), whatever the opponents' time per move.
PERSON_SECONDS = 600.0
#: Hub names of browser seats start with this; a pull bot may not announce one (arena/server/routes/bots.py).
HUB_PREFIX = "browser:"


def hub_name(person: str) -> str:
    return HUB_PREFIX + person


def bots_only(status: dict[str, Any]) -> dict[str, Any]:
    """The hub's status (Hub.status) without the people at play pages: their hub names are not bots'."""
    return {**status, "bots": [bot for bot in status["bots"] if not bot["name"].startswith(HUB_PREFIX)]}


def check_person(name: str) -> str:
    return check_name(name, "name: a person's name")


class BrowserAgent(PullAgent):
    """A person at `arena serve`'s play page, by their token's name."""

    info = AgentInfo(
        id="browser", version="1", description="a person playing on `arena serve`'s play page (the board drawn, moves clicked)",
        params=(
            Param("name", "", "the person: the name of their user token"),
            Param("timeout", PERSON_SECONDS, "seconds the person has per move (more when the match's time per move, with "
                  "its network allowance, is longer: a person is given time)", min=0.001, max=MAX_TIME_PER_MOVE),
            Param("wait", 30.0, "seconds a match waits at its start for the person's page", min=0.0, max=MAX_TIME_PER_MOVE),
        ),
    )  # fmt: skip
    person = True
    plays_where = ("is a person on `arena serve`'s play page, and plays only there (a play page game whose server "
                   "stopped cannot be finished elsewhere: `arena tournaments cancel ID` ends it; `arena play` seats a "
                   "person at the terminal)")  # fmt: skip

    def __init__(self, game: Game, player: int, seed: int, **params: Any) -> None:
        super().__init__(game, player, seed, **params)
        self.name = hub_name(str(self.params["name"]))

    @classmethod
    def check_game(cls, game: Game, params: dict[str, Any]) -> None:
        check_person(str(params.get("name", "")))
        super().check_game(game, params)

    def deadline(self) -> float:
        """A person is not held to the agents' time per move: `timeout`, or the match's deadline if that is longer."""
        return max(float(self.params["timeout"]), super().deadline())

    def act_message(self, state: State) -> dict[str, Any]:
        message = super().act_message(state)
        message["view"] = {"svg": render_svg(state), "text": render_text(state)}
        return message

    def answer(self, body: bytes | str, elapsed: float) -> int:
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            data = None
        if isinstance(data, dict) and "leave" in data:
            raise Forfeit(AGENT_DISCONNECTED, f"seat {self.player}: {self.params['name']} {data['leave']}")
        return super().answer(body, elapsed)


@hookimpl
def register_agents(register: Any) -> None:
    register(BrowserAgent)
