"""A cached Debian 13 (trixie) chroot with Python 3.13, and running commands inside it.

Only Python 3.11 is installed on these machines; Debian 13's packages have 3.13. The chroot
is built once with debootstrap from the Debian mirror in the machine's apt configuration and
kept outside the checkout (it is not part of the project). A build goes to a temporary
folder renamed when complete, so a killed build is never taken for a cache. While commands
run, /proc and /dev are bind-mounted in; ``mounted`` always unmounts what it mounted.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

SUITE = "trixie"
PACKAGES = "python3,python3-venv"
DEFAULT_ROOT = Path(os.environ.get("ENVGEN_PY313_CHROOT", "/var/cache/envgen/py313-chroot"))
COMPLETE = ".envgen-complete"  # written last by a finished build
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def log(message: str) -> None:
    print(f"py313: {message}", flush=True)


def mountpoints_under(path: Path) -> list[Path]:
    """Mount points at or below ``path``, deepest first (so they unmount in order)."""
    found = []
    for line in Path("/proc/self/mounts").read_text().splitlines():
        target = line.split()[1].encode().decode("unicode_escape")  # \040 and friends
        if target == str(path) or target.startswith(f"{path}/"):
            found.append(Path(target))
    return sorted(found, key=lambda p: len(p.parts), reverse=True)


def unmount(target: Path) -> None:
    if subprocess.run(["umount", str(target)], check=False).returncode != 0:
        subprocess.run(["umount", "-l", str(target)], check=False)


def remove_tree(path: Path) -> None:
    """rm -r, but never through a bind mount of the host's /proc or /dev."""
    for target in mountpoints_under(path):
        unmount(target)
    if mountpoints_under(path):
        raise RuntimeError(f"{path} still has mounts; not removing it")
    shutil.rmtree(path, ignore_errors=False)


def ensure_debootstrap() -> str:
    found = shutil.which("debootstrap")
    if found:
        return found
    log("installing debootstrap with apt-get")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "debootstrap"]
    if subprocess.run(install, env=env, check=False).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, check=True)
        subprocess.run(install, env=env, check=True)
    return shutil.which("debootstrap") or "/usr/sbin/debootstrap"


def debian_mirror() -> str:
    """The Debian archive this machine's apt uses (not its security archive)."""
    if os.environ.get("ENVGEN_DEBIAN_MIRROR"):
        return os.environ["ENVGEN_DEBIAN_MIRROR"]
    listing = subprocess.run(
        ["apt-get", "indextargets", "--format", "$(SITE) $(RELEASE)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for line in listing.splitlines():
        site, _, release = line.partition(" ")
        if site.startswith("http") and not release.endswith("-security"):
            return site
    raise RuntimeError("no Debian mirror in `apt-get indextargets`; set ENVGEN_DEBIAN_MIRROR")


@contextmanager
def locked(root: Path = DEFAULT_ROOT) -> Iterator[None]:
    """One run at a time per chroot: a second waits (runs share its /work and venvs)."""
    root.parent.mkdir(parents=True, exist_ok=True)
    with (root.parent / f"{root.name}.lock").open("w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"waiting for another run using {root}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def ensure_chroot(root: Path = DEFAULT_ROOT) -> Path:
    """The chroot at ``root``, built first when missing or incomplete."""
    if (root / COMPLETE).is_file():
        return root
    debootstrap, mirror = ensure_debootstrap(), debian_mirror()
    root.parent.mkdir(parents=True, exist_ok=True)
    for stale in root.parent.glob(f"{root.name}.building-*"):
        remove_tree(stale)
    building = root.parent / f"{root.name}.building-{os.getpid()}"
    log_file = root.parent / f"{root.name}.debootstrap.log"
    log(f"building the {SUITE} chroot from {mirror} (log: {log_file})")
    try:
        with log_file.open("wb") as out:
            argv = [debootstrap, "--variant=minbase", f"--include={PACKAGES}", SUITE]
            done = subprocess.run(
                [*argv, str(building), mirror], stdout=out, stderr=subprocess.STDOUT, check=False
            )
        if done.returncode != 0:
            tail = log_file.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"debootstrap failed ({done.returncode}):\n{tail}")
        (building / COMPLETE).write_text(f"{SUITE} {mirror}\n")
        if root.exists():
            remove_tree(root)
        building.rename(root)
    finally:
        if building.exists():
            remove_tree(building)
    return root


def copy_host_config(root: Path) -> None:
    """DNS, pip's configuration and the CA bundle pip is told to use, at the same paths."""
    cert = os.environ.get("PIP_CERT", CA_BUNDLE)
    for name in ("/etc/resolv.conf", "/etc/pip.conf", CA_BUNDLE, cert):
        source = Path(name)
        if source.is_file():
            target = root / source.relative_to("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    if Path("/etc/xdg/pip").is_dir():  # constraints included: pip behaves as on the host
        shutil.copytree("/etc/xdg/pip", root / "etc/xdg/pip", dirs_exist_ok=True)


def _local_find_links() -> list[Path]:
    """Local folders in PIP_FIND_LINKS: mounted read-only so the kept variable still works."""
    value = os.environ.get("PIP_FIND_LINKS", "")
    return [Path(p) for p in value.split() if p.startswith("/") and Path(p).is_dir()]


@contextmanager
def mounted(root: Path) -> Iterator[None]:
    """/proc, /dev and pip's local find-links inside ``root``; always unmounted again."""
    for leftover in mountpoints_under(root):  # from a run that was killed outright
        unmount(leftover)
    done: list[Path] = []
    try:
        for source in (Path("/proc"), Path("/dev"), *_local_find_links()):
            target = root / source.relative_to("/")
            target.mkdir(parents=True, exist_ok=True)
            subprocess.run(["mount", "--bind", str(source), str(target)], check=True)
            done.append(target)
            if source not in (Path("/proc"), Path("/dev")):
                remount = ["mount", "-o", "remount,bind,ro", str(target)]
                subprocess.run(remount, check=True)
        yield
    finally:
        stop_processes_in(root)
        for target in reversed(done):
            unmount(target)


def processes_in(root: Path) -> list[int]:
    """PIDs of the processes running inside ``root``: only this run's commands and children."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "root") == str(root):
                    found.append(int(entry.name))
            except OSError:  # gone meanwhile, or not ours to look at
                continue
    return found


def stop_processes_in(root: Path, grace_s: float = 5.0) -> None:
    """Stop, by PID, what an interrupted run left in the chroot (servers in their own
    sessions outlive a killed pytest); SIGTERM first, SIGKILL after ``grace_s``."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        pids = processes_in(root)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)
        deadline = time.monotonic() + grace_s
        while pids and time.monotonic() < deadline:
            time.sleep(0.1)
            pids = processes_in(root)
        if not pids:
            return


def environment() -> list[str]:
    """The chroot's whole environment: a plain one plus the host's PIP_* settings."""
    pairs = {"PATH": PATH, "HOME": "/root", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    pairs.update({k: v for k, v in os.environ.items() if k.startswith("PIP_")})
    return [f"{key}={value}" for key, value in pairs.items()]


def run(
    root: Path, argv: Sequence[str], *, cwd: str = "/", echo: bool = True, tail: int = 1
) -> tuple[int, list[str]]:
    """Run ``argv`` in the chroot; print its output as it comes; return code and last lines."""
    command = ["chroot", str(root), "/usr/bin/env", "-i", "-C", cwd, *environment(), *argv]
    last: deque[str] = deque(maxlen=tail)
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        start_new_session=True,  # its own process group, so an interruption can stop it all
    )
    assert process.stdout is not None
    try:
        for line in process.stdout:
            if echo:
                sys.stdout.write(line)
                sys.stdout.flush()
            if line.strip():
                last.append(line.rstrip("\n"))
        return process.wait(), list(last)
    except BaseException:
        interrupt(process)
        raise
    finally:
        process.stdout.close()


def interrupt(process: subprocess.Popen[str], grace_s: float = 15.0) -> None:
    """SIGINT to the command's process group (pytest then stops its servers), then SIGKILL."""
    for signum in (signal.SIGINT, signal.SIGKILL):
        try:
            os.killpg(process.pid, signum)
        except ProcessLookupError:
            return
        try:
            process.wait(grace_s)
            return
        except subprocess.TimeoutExpired:
            continue


def check(root: Path, argv: Sequence[str], *, cwd: str = "/") -> None:
    """Run quietly; on failure raise with the command's last 40 lines."""
    code, lines = run(root, argv, cwd=cwd, echo=False, tail=40)
    if code != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({code}):\n" + "\n".join(lines))
