"""A process that holds lake work and waits to be killed: run as
``python -m tests.store.lake.holder_process CATALOG DATA_PATH KIND [TRACE_ID ...]``.

KIND ``settle``, ``evaluate`` or ``judge``: a lake store opened on the lake claims those traces for
that kind of work (``lake.claims.claim``, as a round or a verdict write does). KIND ``lease``: the
lake's maintenance lease is claimed (``CatalogLeases``), for an hour. Then it prints ``held
HOLDER`` and blocks on its standard input, holding what it claimed, until it is killed."""

from __future__ import annotations

import sys

from collector.store.lake import claims as lake_claims
from collector.store.lake.store import LakeStore
from collector.store.lease import CatalogLeases
from collector.store.maintenance import LEASE


def main(argv: list[str]) -> int:
    catalog, data_path, kind, *ids = argv
    if kind == "lease":
        leases = CatalogLeases(catalog, extension_repository=False)
        if not leases.claim(LEASE, 3600):
            print("not held", flush=True)
            return 1
        print(f"held {leases.holder}", flush=True)
    else:
        store = LakeStore(data_path=data_path, catalog=catalog, extension_repository=False)
        cur = store.cursor()
        got = lake_claims.claim(cur, kind, ids)
        mine = lake_claims.me(cur)
        if sorted(got) != sorted(ids) or mine is None:
            print(f"not held: {got}", flush=True)
            return 1
        print(f"held {mine[0]}", flush=True)
    sys.stdin.read()  # until killed (or the test closes the pipe)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
