"""`masklens models`: the backends, where each one's weights would come from, and whether they are here.

Nothing is downloaded and the network is never contacted: Hugging Face ids are
looked up in the local hub cache only (``HF_HUB_CACHE``, else ``HF_HOME/hub``,
else the default ``~/.cache/huggingface/hub``).
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from dataclasses import asdict

from masklens.core.errors import MasklensError
from masklens.core.models.inventory import hf_cache_dir, inventory


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("models", help="list model backends and whether their weights are present")
    p.add_argument("names", nargs="*", metavar="NAME", help="only these backends")
    p.add_argument("--weights", metavar="PATH_OR_ID",
                   help="check this checkpoint instead of the default (with exactly one NAME)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from masklens.core.runtime.extras import check

    check("masklens models", ("huggingface_hub",), extra="hub")  # it reads the hub cache's layout
    if args.weights and len(args.names) != 1:
        raise MasklensError("--weights needs exactly one backend NAME", hint="e.g. masklens models sam3 --weights DIR")
    entries = inventory(args.names or None, {args.names[0]: args.weights} if args.weights else None)
    if args.json:
        data = [{**asdict(e), "ready": e.ready} for e in entries]
        print(json.dumps({"hf_cache": str(hf_cache_dir()), "backends": data}, indent=2))
        return 0
    print(f"Hugging Face cache: {hf_cache_dir()} (offline lookup; nothing is downloaded)")
    for e in entries:
        state = "ready" if e.ready else ("unavailable" if not e.available else "weights missing")
        print(f"\n{e.name:<14} {e.title}  [{state}]")
        if e.problem:
            print(f"  {e.problem}")
            continue
        if e.description:
            print(textwrap.fill(e.description, 96, initial_indent="  ", subsequent_indent="  "))
        if e.score_threshold is not None:
            print(f"  default score threshold: {e.score_threshold:g}")
        if not e.checkpoints:
            print("  no weights needed")
        for c in e.checkpoints:
            print(f"  {c.role}: {c.spec}\n    {c.status}: {c.location}")
            if c.hint and not c.present:
                print(f"    get it: {c.hint}")
    sys.stdout.flush()
    return 0
