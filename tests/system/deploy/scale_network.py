"""Hosts on one machine for the scale-out test: network namespaces on a bridge, and a way in to loopback services.

Each host is a network namespace (``ip netns add``) with one end of a veth pair; the other
ends hang on a bridge in the root namespace that holds the network's first address
(10.219.N.1/24). A host sees only its own loopback and the bridge network: PostgreSQL and
Redis, which listen on the machine's 127.0.0.1, are reached through tcp_forward.py listening
on the bridge address, as a database host is reached over the network. Names carry this
process's id, so a run killed before its cleanup is cleaned up by the next one.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from dataclasses import dataclass, field

PREFIX = "tbscale"  # namespace names: tbscale-<pid>-<host>; links: tbs<pid><index>, the bridge tbs<pid>br


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run one `ip` command; raise with its message when check and it fails."""
    result = subprocess.run(["ip", *args], capture_output=True, text=True, check=False, timeout=30)
    if check and result.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {result.stderr.strip()}")
    return result


def netns_problem() -> str | None:
    """Return why network namespaces cannot be made here (not root, no CAP_NET_ADMIN, no `ip`), or None."""
    if os.geteuid() != 0:
        return "network namespaces need root (ip netns add); run the scale-out test as root"
    probe = f"{PREFIX}-{os.getpid()}-probe"
    try:
        made = ip("netns", "add", probe, check=False)
    except FileNotFoundError:
        return "the `ip` command (iproute2) is not installed"
    if made.returncode != 0:
        return f"ip netns add failed (no CAP_NET_ADMIN?): {made.stderr.strip()}"
    ip("netns", "del", probe, check=False)
    return None


def remove_leftovers() -> None:
    """Kill the processes of earlier runs' namespaces whose test process is gone; delete those and their bridges."""
    for line in ip("netns", "list").stdout.splitlines():
        match = re.match(rf"({PREFIX}-(\d+)-\S+)", line)
        if match and not _alive(int(match.group(2))):
            for pid in ip("netns", "pids", match.group(1), check=False).stdout.split():
                _kill(int(pid))
            ip("netns", "del", match.group(1), check=False)
    for match in re.finditer(r"^\d+: (tbs(\d+)br)[:@]", ip("-o", "link", "show").stdout, re.MULTILINE):
        if not _alive(int(match.group(2))):
            ip("link", "del", match.group(1), check=False)


def _kill(pid: int) -> None:
    """Kill one process with -9, if it still exists."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Return whether a process with this id runs on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class Network:
    """A bridge with this machine's root namespace at .1 and one namespace per host at the addresses given."""

    hosts: dict[str, int]  # host name -> last byte of its address
    subnet: str = field(default_factory=lambda: f"10.219.{20 + os.getpid() % 200}")
    made: list[str] = field(default_factory=list)

    @property
    def bridge_address(self) -> str:
        """Return the root namespace's address on the bridge (where the forwarder and S3 listen)."""
        return f"{self.subnet}.1"

    def address(self, host: str) -> str:
        """Return a host's address."""
        return f"{self.subnet}.{self.hosts[host]}"

    def namespace(self, host: str) -> str:
        """Return a host's network namespace name."""
        return f"{PREFIX}-{os.getpid()}-{host}"

    def create(self) -> None:
        """Make the bridge and every host's namespace, veth pair and address; bring them up."""
        bridge = f"tbs{os.getpid()}br"
        ip("link", "add", bridge, "type", "bridge")
        self.made.append(f"link:{bridge}")
        ip("addr", "add", f"{self.bridge_address}/24", "dev", bridge)
        ip("link", "set", bridge, "up")
        for index, host in enumerate(self.hosts):
            self._add_host(host, bridge, f"tbs{os.getpid()}{index}")

    def _add_host(self, host: str, bridge: str, link: str) -> None:
        """Make one host: its namespace, a veth pair with one end on the bridge, its address, loopback up."""
        namespace = self.namespace(host)
        ip("netns", "add", namespace)
        self.made.append(f"netns:{namespace}")
        ip("link", "add", link, "type", "veth", "peer", "name", f"{link}p")
        self.made.append(f"link:{link}")
        ip("link", "set", f"{link}p", "netns", namespace)
        ip("link", "set", link, "master", bridge)
        ip("link", "set", link, "up")
        inside = ("netns", "exec", namespace, "ip")
        ip(*inside, "addr", "add", f"{self.address(host)}/24", "dev", f"{link}p")
        ip(*inside, "link", "set", f"{link}p", "up")
        ip(*inside, "link", "set", "lo", "up")

    def command(self, host: str, args: list[str]) -> list[str]:
        """Return args run inside a host's namespace."""
        return ["ip", "netns", "exec", self.namespace(host), *args]

    def destroy(self) -> None:
        """Delete everything create made (namespaces first: that removes their veth ends)."""
        for item in reversed(self.made):
            kind, name = item.split(":", 1)
            if kind == "netns":
                ip("netns", "del", name, check=False)
            else:
                ip("link", "del", name, check=False)
        self.made.clear()
