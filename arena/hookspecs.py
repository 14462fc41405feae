"""The plugin contract: every hook a plugin may implement with `@arena.hookimpl`."""

from collections.abc import Callable

import click
import pluggy

from arena.api import Agent, Game

hookspec = pluggy.HookspecMarker("arena")


@hookspec
def register_games(register: Callable[[type[Game]], None]) -> None:
    """Add games: call `register(GameClass)` once per game."""


@hookspec
def register_agents(register: Callable[[type[Agent]], None]) -> None:
    """Add agent types: call `register(AgentClass)` once per agent type."""


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add commands to the `arena` command group."""
