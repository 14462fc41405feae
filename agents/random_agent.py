"""`random`: uniform over the legal actions, from a seeded RNG."""

import arena


class RandomAgent(arena.Agent):
    info = arena.AgentInfo(id="random", description="Uniformly random legal action (seeded).")

    def act(self, state: arena.State) -> int:
        return self.rng.choice(state.legal_actions())


@arena.hookimpl
def register_agents(register):
    register(RandomAgent)
