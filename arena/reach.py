"""What the agents a request gives a server may reach: the hosts they call (`arena serve --bot-hosts`) and the files
they read (`arena serve --models-dir`).

A token holder names agents in requests: a tournament's agents and challenger, a ladder's newcomer, a play page's
opponents, a named agent registered over HTTP, and the named agents those name (including ones the command line
registered). An `http` agent makes the server send requests to its URL; a `neural`, `mcts` or `minimax` agent makes it
open a network file, a `linear` one a weights file, and their errors say what they found there. With the options,
every such agent must call a listed host (arena.remote.hosts) and read only files inside the models folder (after
following links). The check runs on the agents as given, before any is made, so a refused file is never opened.
Without the options anything may be reached, as on the command line, where whoever runs Arena chooses the agents.

Agent types declare what they reach: `Agent.url_param` (the parameter holding the URL) and `Agent.files(params)`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from arena.agents import Lookup, stored_spec
from arena.api import Agent
from arena.errors import ArenaError, about, plugin_code
from arena.params import parse_specs
from arena.plugins import Registry
from arena.remote.hosts import BotHosts, host_of


@dataclass(frozen=True)
class Reach:
    """The hosts agents may call and the folder their files must lie in (None: any)."""

    hosts: BotHosts | None = None
    models: Path | None = None  # absolute, links resolved

    @classmethod
    def of(cls, hosts: BotHosts | None = None, models: str | os.PathLike[str] | None = None) -> Reach:
        """The limits of `--bot-hosts` and `--models-dir` (a folder, resolved now: a file's real path must lie in it)."""
        return cls(hosts, None if models is None else Path(os.path.realpath(models)))

    def refusal(self, agent_cls: type[Agent], label: str, params: Mapping[str, str]) -> str | None:
        """Why agent `label` (of `agent_cls`, with `params` as given) reaches beyond these limits, or None."""
        if self.hosts is not None and agent_cls.url_param is not None:
            url = str(params.get(agent_cls.url_param, ""))
            if not self.hosts.allows(url):
                return f"'{label}' calls host {host_of(url) or url}, which this server's --bot-hosts does not list (it lists {self.hosts})"
        if self.models is not None:
            with plugin_code(f"agent '{agent_cls.info.id}': its files"):
                files = agent_cls.files(params)
            for path in files:
                if not Path(os.path.realpath(path)).is_relative_to(self.models):
                    return (f"'{label}' reads {path}, which is not inside this server's --models-dir {self.models} (links "
                            "followed): give a file in that folder")  # fmt: skip
        return None

    def check(self, registry: Registry, text: str, lookup: Lookup, field: str) -> None:
        """Refuse (ArenaError about `field`) an agent of the list `text` (specs, or names `lookup` finds, as
        arena.agents.resolve_each reads them) that reaches beyond these limits; nothing is made or read."""
        if self.hosts is None and self.models is None:
            return
        with about(field):
            specs = parse_specs(text)
        for spec in specs:
            named = lookup(spec.id) if not spec.params else None
            label, given = (spec.id, stored_spec(named)) if named is not None else (str(spec), spec)
            agent_cls = registry.agents.get(given.id)
            why = None if agent_cls is None else self.refusal(agent_cls, label, given.params)  # unknown: resolution says
            if why is not None:
                raise ArenaError(f"{field}: {why}", field)


#: No limits: the command line's, and a server's without the options.
ANYWHERE = Reach()
