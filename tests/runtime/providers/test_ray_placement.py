"""The default Ray placement's choice of node, over a fake ``ray.nodes()`` table (no cluster)."""

from __future__ import annotations

from typing import Any

from envgen_runtime.providers.ray_placement import NodeLedger, least_held_node, placement_demand


def _node(node_id: str, alive: bool = True, **resources: float) -> dict[str, Any]:
    return {"NodeID": node_id, "Alive": alive, "Resources": {"CPU": 2.0, **resources}}


def test_an_actor_that_names_no_cpus_needs_one_to_be_placed() -> None:
    assert placement_demand({"max_restarts": 0}) == {"CPU": 1.0}
    assert placement_demand({"num_cpus": 0}) == {}
    assert placement_demand(
        {"num_cpus": 0.5, "num_gpus": 1, "memory": 2**20, "resources": {"env_slot": 4}}
    ) == {"CPU": 0.5, "GPU": 1.0, "memory": float(2**20), "env_slot": 4.0}
    assert placement_demand({"accelerator_type": "A100"}) == {
        "CPU": 1.0,
        "accelerator_type:A100": 0.001,
    }


def test_the_node_holding_fewest_servers_wins_ties_by_node_id() -> None:
    nodes = [_node("c"), _node("a"), _node("b")]
    assert least_held_node(nodes, {"CPU": 1.0}, {}) == "a"
    assert least_held_node(nodes, {"CPU": 1.0}, {"a": 1}) == "b"
    assert least_held_node(nodes, {"CPU": 1.0}, {"a": 2, "b": 1, "c": 1}) == "b"


def test_only_alive_nodes_whose_resources_fit_are_chosen() -> None:
    nodes = [_node("a", alive=False), _node("b"), _node("c", GPU=1.0), _node("d", CPU=0.5)]
    assert least_held_node(nodes, {"CPU": 1.0}, {"b": 3, "c": 5}) == "b"
    assert least_held_node(nodes, {"CPU": 1.0, "GPU": 1.0}, {"c": 5}) == "c"
    assert least_held_node(nodes, {"CPU": 4.0}, {}) is None
    assert least_held_node(nodes, {}, {"b": 1, "c": 1}) == "d"


def test_the_ledger_counts_claimed_and_held_servers_until_they_are_released() -> None:
    ledger = NodeLedger()
    nodes = [_node("a"), _node("b")]
    first, second, third = object(), object(), object()
    assert ledger.claim(first, nodes, {"CPU": 1.0}) == "a"
    assert ledger.claim(second, nodes, {"CPU": 1.0}) == "b"
    ledger.hold(second, "a")  # it spilled: it really runs on a
    assert ledger.claim(third, nodes, {"CPU": 1.0}) == "b"
    ledger.release(first)
    ledger.release(first)
    assert ledger.claim(object(), nodes, {"CPU": 1.0}) == "a"
    assert ledger.claim(object(), [_node("a", alive=False)], {"CPU": 1.0}) is None
