"""The gymnasium API over envgen clients and pools (the ``gym`` extra).

``pool_env`` (``GymVectorEnv``) is a ``gymnasium.vector.VectorEnv`` over an ``EnvPool``,
with gymnasium's next-step autoreset; ``env`` (``GymEnv``) is one client as a
``gymnasium.Env``; ``spaces`` (``ModelSpace``) is the space of a generated model type, with
``sampling`` drawing random JSON values for its ``sample``; ``batch`` turns the pool's
per-slot results into gymnasium's batches. Built on ``pool`` and ``client``; gymnasium is
imported here, so ``import envgen_runtime`` never loads it (its face exports these names
lazily).
"""

from __future__ import annotations

from ..core.extras import require

require("gymnasium", "the gymnasium API (envgen_runtime.GymEnv, GymVectorEnv)")
