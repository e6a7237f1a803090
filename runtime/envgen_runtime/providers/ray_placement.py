"""Even spread for ``RayProvider``'s default placement: the provider picks each server's node.

Ray's ``"SPREAD"`` strategy is best effort: on a fresh cluster it often puts several actors on
one node, where a trainer asking for servers over a cluster expects them spread evenly. So for
the default placement the provider picks the node itself: among the alive nodes whose total
resources fit the actor, the one holding the fewest of this process's live servers (ties by
node id). Ray is then asked for that node softly (see ``ray.RayProvider``), so a node that
fills up or dies meanwhile still lets the actor start elsewhere.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any


def placement_demand(options: Mapping[str, Any]) -> dict[str, float]:
    """What a node must have to place an actor with these ``.options()``, as Ray counts it.

    Ray places an actor that names no CPUs as needing 1 CPU (an actor with no resources
    given holds 0 while it lives, but its methods need 1), so ``CPU`` defaults to 1.
    """
    demand = {str(name): float(amount) for name, amount in (options.get("resources") or {}).items()}
    num_cpus = options.get("num_cpus")
    demand["CPU"] = 1.0 if num_cpus is None else float(num_cpus)
    for option, resource in (
        ("num_gpus", "GPU"),
        ("memory", "memory"),
        ("object_store_memory", "object_store_memory"),
    ):
        if options.get(option) is not None:
            demand[resource] = float(options[option])
    if options.get("accelerator_type") is not None:
        demand[f"accelerator_type:{options['accelerator_type']}"] = 0.001
    return {name: amount for name, amount in demand.items() if amount > 0}


def _fits(node: Mapping[str, Any], demand: Mapping[str, float]) -> bool:
    total: Mapping[str, float] = node.get("Resources") or {}
    return all(total.get(name, 0.0) >= amount for name, amount in demand.items())


def least_held_node(
    nodes: Sequence[Mapping[str, Any]], demand: Mapping[str, float], held: Mapping[str, int]
) -> str | None:
    """The alive node (of ``ray.nodes()``) that fits ``demand`` and holds fewest servers.

    ``held`` counts servers per node id; ties go to the smallest node id. None when no
    alive node fits.
    """
    fitting = [str(n["NodeID"]) for n in nodes if n.get("Alive") and _fits(n, demand)]
    return min(fitting, key=lambda node_id: (held.get(node_id, 0), node_id), default=None)


class NodeLedger:
    """Which node each of this process's live servers is on (or was sent to), to count them.

    ``claim`` picks and records a node in one step under a lock, so servers started in
    parallel threads (a pool's) see each other's choices.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._nodes: dict[object, str] = {}

    def claim(
        self, owner: object, nodes: Sequence[Mapping[str, Any]], demand: Mapping[str, float]
    ) -> str | None:
        """Pick the node for ``owner``'s server (``least_held_node``) and record it there."""
        with self._lock:
            node_id = least_held_node(nodes, demand, Counter(self._nodes.values()))
            if node_id is not None:
                self._nodes[owner] = node_id
            return node_id

    def hold(self, owner: object, node_id: str) -> None:
        """Record that ``owner``'s server runs on ``node_id`` (where it really started)."""
        with self._lock:
            self._nodes[owner] = node_id

    def release(self, owner: object) -> None:
        """``owner``'s server stopped; idempotent."""
        with self._lock:
            self._nodes.pop(owner, None)


LEDGER = NodeLedger()
"""This process's Ray servers, which every ``RayProvider`` records itself in while it runs."""
