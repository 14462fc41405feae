"""An example loose-file agent plugin: drop a file like this into ./plugins/ (or --plugins-dir DIR).

Arena imports every `*.py` file in those folders and calls its hooks. This one adds the agent
type `center`, which plays the legal action nearest the middle of the legal list (in connect
four: the most central open column), breaking ties at random, and sometimes (`noise`) a random one.

Try it:  arena run-tournament --game connect_four --agents center,random --rounds 10
"""

import arena

__version__ = "1.0"


class CenterAgent(arena.Agent):
    info = arena.AgentInfo(
        id="center",
        version=__version__,
        description="Example plugin: the legal action nearest the middle of the legal list.",
        params=(arena.Param("noise", 0.0, "probability of a uniformly random move instead", min=0.0, max=1.0),),
    )

    def act(self, state: arena.State) -> int:
        actions = state.legal_actions()
        # self.rng is seeded per match and seat by the arena: same tournament seed, same play.
        if self.rng.random() < self.params.get("noise", 0.0):
            return self.rng.choice(actions)
        middle = (len(actions) - 1) / 2
        distance = min(abs(i - middle) for i in range(len(actions)))
        nearest = [a for i, a in enumerate(actions) if abs(i - middle) == distance]
        return self.rng.choice(nearest)


@arena.hookimpl
def register_agents(register):
    register(CenterAgent)
