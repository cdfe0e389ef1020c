"""`masklens cache info|clear`: the on-disk prediction cache (it grows with every new model,
image and prompt; nothing is ever evicted on its own)."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("cache", help="show or clear the prediction cache")
    parser.add_argument("--cache-dir", metavar="DIR", help="cache folder (default: $MASKLENS_CACHE_DIR "
                        "or the user cache dir)")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    info = actions.add_parser("info", help="path, entries, size on disk, entries by backend")
    info.set_defaults(func=run_info)
    clear = actions.add_parser("clear", help="remove cached predictions (needs --yes)")
    clear.add_argument("--yes", action="store_true", help="really remove them")
    clear.add_argument("--older-than", type=float, metavar="DAYS", help="only entries older than DAYS")
    clear.add_argument("--model", metavar="NAME", help="only entries of this model backend")
    clear.set_defaults(func=run_clear)


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError  # pragma: no cover


def _day(epoch: float | None) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d") if epoch else "-"


def run_info(args: argparse.Namespace) -> int:
    from masklens.core.cache.admin import cache_info

    info = cache_info(args.cache_dir)
    print(f"path:    {info.path}")
    if not info.exists:
        print("entries: 0 (no cache yet)")
        return 0
    print(f"entries: {info.entries}")
    print(f"size:    {_size(info.size_bytes)} on disk")
    if info.by_backend:
        width = max(len(b) for b in info.by_backend)
        print("by backend:")
        for backend, u in info.by_backend.items():
            print(f"  {backend:<{width}}  {u.entries:>7} entries  {_size(u.result_bytes):>10}"
                  f"  {_day(u.oldest)} .. {_day(u.newest)}")
    return 0


def run_clear(args: argparse.Namespace) -> int:
    from masklens.core.cache.admin import cache_info, clear_cache, count_matching

    which = " ".join(filter(None, [f"of model {args.model}" if args.model else "",
                                   f"older than {args.older_than:g} days" if args.older_than is not None
                                   else ""])) or "(all)"
    n = count_matching(args.cache_dir, model=args.model, older_than_days=args.older_than)
    if not args.yes:
        print(f"would remove {n} cached predictions {which} from {cache_info(args.cache_dir).path}; "
              "add --yes to remove them", file=sys.stderr)
        return 1
    removed = clear_cache(args.cache_dir, model=args.model, older_than_days=args.older_than)
    info = cache_info(args.cache_dir)
    print(f"removed {removed} cached predictions {which}; {info.entries} left, "
          f"{_size(info.size_bytes)} on disk", file=sys.stderr)
    return 0
