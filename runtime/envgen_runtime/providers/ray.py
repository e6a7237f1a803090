"""``RayProvider``: an env server in a Ray actor, placed on a cluster's nodes.

Each provider owns one actor and the actor owns one server process, started on the actor's
node address at a free port. The client connects to that address itself: Ray only places
and supervises, it is not in the data path. Lifetimes nest so that nothing outlives its
owner: ``stop()`` (or the ``with`` block, or interpreter exit) stops the server and kills
the actor; Ray kills the actor when the driver dies; and the server runs under
``providers.orphan_guard``, which ends it when the actor's process is gone (driver death, node
removal, ``ray.kill``). Ray itself is imported on first start (extra ``ray``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.checks import positive
from ..core.errors import ProviderError
from ..core.extras import require
from . import exit_stop
from .base import ProviderContext, check_server_options
from .local import LocalProcessProvider
from .ray_placement import LEDGER, placement_demand

_STOP_TIMEOUT_S = 15.0
_init_lock = threading.Lock()
"""Providers start in parallel threads (a pool's servers): one of them may call ray.init."""


def _init_in_lasting_thread(
    ray: Any, address: str | None, options: dict[str, Any], timeout_s: float
) -> None:
    """``ray.init`` from a thread that lives as long as the interpreter, within ``timeout_s``.

    Ray starts its local processes (GCS, raylet) with a parent-death signal, which Linux
    sends when the *thread* that started them ends: ``ray.init`` from a worker thread (a
    pool starts its servers in threads) would see its cluster killed when that thread
    finished. So a daemon thread does the init and stays. It also bounds the wait: Ray
    retries an address that never answers for minutes; the thread is left to it.
    """
    from concurrent.futures import Future
    from concurrent.futures import TimeoutError as FutureTimeout

    done: Future[None] = Future()

    def init_and_stay() -> None:
        try:
            ray.init(address=address, **options)
        except BaseException as exc:
            done.set_exception(exc)
            return
        done.set_result(None)
        threading.Event().wait()  # keep Ray's processes' parent thread alive

    threading.Thread(target=init_and_stay, name="envgen-ray-init", daemon=True).start()
    try:
        done.result(timeout=timeout_s)
    except FutureTimeout:
        raise ProviderError(
            _no_cluster(address, f"did not connect within {timeout_s:g} s")
        ) from None
    except Exception as exc:
        raise ProviderError(_no_cluster(address, f"failed: {type(exc).__name__}: {exc}")) from exc


def _no_cluster(address: str | None, what: str) -> str:
    """Why ``ray.init`` could not reach ``address``, and the three ways on."""
    if address == "auto":
        found = os.environ.get("RAY_ADDRESS")
        named = (
            f"address 'auto' (RAY_ADDRESS={found})"
            if found
            else "address 'auto' (the cluster last started on this machine, as recorded in "
            "/tmp/ray/ray_current_cluster; RAY_ADDRESS unset)"
        )
    elif address is None:
        named = "a new local Ray"
    else:
        named = f"address {address!r}"
    return (
        f"ray.init for {named} {what}. Is a cluster running there (`ray status`)? Start one "
        "with `ray start --head` and pass its address (provider_options={'address': "
        "'HOST:PORT'}), leave address unset to start a local Ray in this process, or raise "
        "connect_timeout_s if the cluster is just slow to answer."
    )


class _ServerHost:
    """The actor's body: a ``LocalProcessProvider`` on the actor's node, under the guard."""

    def __init__(self, command: Sequence[str], host: str | None, options: dict[str, Any]) -> None:
        self._command = tuple(command)
        self._host = host
        self._options = options
        self._provider: LocalProcessProvider | None = None

    def start(self) -> dict[str, Any]:
        """Start the server; return its URL, node id and the pids involved."""
        import ray

        node_address: Any = ray.util.get_node_ip_address
        host = self._host or str(node_address())
        guard = ("{python}", "-m", "envgen_runtime.providers.orphan_guard", str(os.getpid()), "--")
        provider = LocalProcessProvider((*guard, *self._command), host=host, **self._options)
        self._provider = provider
        try:
            url = provider.start()
        except ProviderError as exc:
            # Ray would wrap the exception; a plain payload keeps message and output intact.
            return {"error": exc.message, "output": exc.output, "exit_code": exc.exit_code}
        return {
            "base_url": url,
            "node_id": ray.get_runtime_context().get_node_id(),
            "actor_pid": os.getpid(),
            "server_pid": provider.pid,
        }

    def stop(self) -> None:
        """Stop the server process group; idempotent."""
        if self._provider is not None:
            self._provider.stop()


@functools.cache
def _actor_class() -> Any:
    return require("ray", "RayProvider").remote(_ServerHost)


class RayProvider(ProviderContext):
    """Runs an environment server in a Ray actor (one server process per actor).

    ``command`` and ``missing_module_hint`` as for ``LocalProcessProvider`` (``{python}``
    and ``{host}`` are the actor's interpreter and node address). ``address`` names a
    cluster (``"auto"``, ``"host:port"``); with None a running ``ray.init()`` is reused,
    else a local Ray starts on 127.0.0.1. Connecting (``ray.init``) gives up after
    ``connect_timeout_s`` with a ProviderError naming the address.
    Placement: by default (``scheduling_strategy="SPREAD"``) the provider spreads servers
    evenly itself (``ray_placement``): each goes to the alive node that fits it and holds
    the fewest of this process's servers, asked for softly (it may spill to another node).
    Any other Ray strategy, or ``placement_group`` with ``bundle_index``, goes to Ray as it
    is, as do ``actor_options`` (a ``scheduling_strategy`` there too, Ray's own ``"SPREAD"``
    included). Ray never restarts the actor: a pool replaces a lost server with a new provider.
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        health_path: str = "/health",
        startup_timeout_s: float = 60.0,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        transport: str = "websocket",
        address: str | None = None,
        host: str | None = None,
        scheduling_strategy: Any = "SPREAD",
        placement_group: Any = None,
        bundle_index: int = -1,
        num_cpus: float | None = None,
        resources: Mapping[str, float] | None = None,
        actor_options: Mapping[str, Any] | None = None,
        init_options: Mapping[str, Any] | None = None,
        connect_timeout_s: float = 30.0,
        missing_module_hint: str | None = None,
    ) -> None:
        self._command = check_server_options(command, health_path, startup_timeout_s)
        self._startup_timeout_s = startup_timeout_s
        positive("connect_timeout_s", connect_timeout_s)
        self._connect_timeout_s = connect_timeout_s
        self._server_options = {
            "health_path": health_path,
            "startup_timeout_s": startup_timeout_s,
            "env": dict(env) if env is not None else None,
            "cwd": os.fspath(cwd) if cwd is not None else os.getcwd(),
            "transport": transport,
            "missing_module_hint": missing_module_hint,
        }
        self._address = address
        self._host = host
        self._actor_options: dict[str, Any] = {"max_restarts": 0, "max_concurrency": 2}
        if placement_group is None and scheduling_strategy is not None:
            self._actor_options["scheduling_strategy"] = scheduling_strategy
        self._spreads = (
            placement_group is None
            and scheduling_strategy == "SPREAD"
            and "scheduling_strategy" not in (actor_options or {})
        )
        if num_cpus is not None:
            self._actor_options["num_cpus"] = num_cpus
        if resources is not None:
            self._actor_options["resources"] = dict(resources)
        self._actor_options.update(actor_options or {})
        self._placement = (placement_group, bundle_index)
        self._init_options = dict(init_options or {})
        self._lock = threading.RLock()
        self._actor: Any = None
        self.node_id: str | None = None
        """Ray node id of the node the server runs on (None when stopped)."""
        self.actor_pid: int | None = None
        self.server_pid: int | None = None

    def _ensure_ray(self) -> Any:
        ray = require("ray", "RayProvider")
        with _init_lock:
            if not ray.is_initialized():
                options: dict[str, Any] = {"log_to_driver": False, **self._init_options}
                if self._address is None:
                    options.setdefault("_node_ip_address", "127.0.0.1")
                    options.setdefault("include_dashboard", False)
                _init_in_lasting_thread(ray, self._address, options, self._connect_timeout_s)
        return ray

    def _placed_options(self, ray: Any) -> dict[str, Any]:
        """The actor's ``.options()``; for the default placement, claims its node first.

        The node is asked for softly and may spill (``_spill_on_unavailable``): one that
        filled up or died since ``ray.nodes()`` still lets the actor start elsewhere. With
        no alive node that fits, Ray's own SPREAD places (or queues) the actor.
        """
        placement_group, bundle_index = self._placement
        if placement_group is not None:
            from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

            strategy: Any = PlacementGroupSchedulingStrategy(
                placement_group, placement_group_bundle_index=bundle_index
            )
            return {"scheduling_strategy": strategy, **self._actor_options}
        if not self._spreads:
            return self._actor_options
        node_id = LEDGER.claim(self, ray.nodes(), placement_demand(self._actor_options))
        if node_id is None:
            return self._actor_options
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        strategy = NodeAffinitySchedulingStrategy(node_id, soft=True, _spill_on_unavailable=True)
        return {**self._actor_options, "scheduling_strategy": strategy}

    def start(self) -> str:
        """Create the actor, start the server in it, wait until healthy; return its URL."""
        with self._lock:
            if self._base_url is not None:
                return self._base_url
            ray = self._ensure_ray()
            try:
                actor = (
                    _actor_class()
                    .options(**self._placed_options(ray))
                    .remote(self._command, self._host, self._server_options)
                )
            except BaseException:
                LEDGER.release(self)
                raise
            self._actor = actor
            exit_stop.register(self)
            try:
                reply = ray.get(actor.start.remote(), timeout=self._startup_timeout_s + 60)
            except Exception as exc:
                import shlex

                self.stop()
                raise ProviderError(
                    f"Ray actor for `{shlex.join(self._command)}` failed to start its "
                    f"server: {type(exc).__name__}: {exc}"
                ) from exc
            if "error" in reply:
                self.stop()
                raise ProviderError(
                    f"in a Ray actor: {reply['error']}",
                    output=reply["output"],
                    exit_code=reply["exit_code"],
                )
            self.node_id = reply["node_id"]
            LEDGER.hold(self, reply["node_id"])
            self.actor_pid = reply["actor_pid"]
            self.server_pid = reply["server_pid"]
            self._base_url = reply["base_url"]
            return self._base_url

    def stop(self) -> None:
        """Stop the server and kill the actor; idempotent, and quiet when the node is gone."""
        with self._lock:
            actor, self._actor = self._actor, None
            self._base_url = None
            self.node_id = self.actor_pid = self.server_pid = None
            ray = sys.modules.get("ray")
            try:
                if actor is not None and ray is not None and ray.is_initialized():
                    with contextlib.suppress(Exception):
                        ray.get(actor.stop.remote(), timeout=_STOP_TIMEOUT_S)
                    with contextlib.suppress(Exception):
                        ray.kill(actor, no_restart=True)
            finally:
                LEDGER.release(self)
                exit_stop.unregister(self)
