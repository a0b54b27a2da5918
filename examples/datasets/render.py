"""Render recorded trajectories (JSON lines, one request per line) into prompts.

    python examples/datasets/trajectories.py 10000 trajectories.jsonl
    python examples/datasets/render.py ray      trajectories.jsonl prompts/
    python examples/datasets/render.py datasets trajectories.jsonl prompts/

Writes Parquet with one row per input line, in input order: its number
(``line``, from 1: join on it), the line (``text``), ``ok``, the messages (a nested column), ``prompt_chars``,
``context_overflow``, the three prefix digests, and for an invalid request
``error_code``, ``error_path`` and ``error_message`` (an error row, never a
failed job or a dropped row); with ``--response``, ``response`` holds the
exact response bytes.
See ``polyloop_assembly.data`` for the columns. A line ends at "\\n" alone
(``data.ray_read_lines``, ``data.hf_read_lines``): a U+2028, U+2029, U+0085
or CR inside a request stays in it, where ``ray.data.read_text`` and
``load_dataset("text")`` would split it into rows that are not requests.

Ray runs on a local cluster of 2 CPUs here (``ray.init(num_cpus=2)``), or on
the cluster ``RAY_ADDRESS`` names; each of the ``concurrency`` actors holds
one assembler. ``datasets`` runs ``map(num_proc=2)``.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from polyloop_assembly.data import RenderBatch, hf_read_lines, ray_read_lines


def ray_pipeline(path: str, concurrency: int = 2, batch_size: int = 1000, **options: Any) -> Any:
    """The Ray Data pipeline (lazy): read lines, render, rows in input order.
    Needs ``ray.init`` first."""
    import ray

    ray.data.DataContext.get_current().execution_options.preserve_order = True
    ds = ray_read_lines(path)  # columns "line", "text", "path": one row per "\n" line
    # Half a CPU per actor: on a 2-CPU cluster the read tasks still get one.
    return ds.map_batches(
        RenderBatch,
        fn_constructor_kwargs=dict(options, column="text"),
        batch_format="pyarrow",
        batch_size=batch_size,
        compute=ray.data.ActorPoolStrategy(size=concurrency),
        num_cpus=0.5,
    )


def hf_pipeline(path: str, num_proc: int = 2, cache_dir: str = "", batch_size: int = 1000, **options: Any) -> Any:
    """The Hugging Face ``datasets`` pipeline: read lines, render with ``num_proc`` processes
    (``options``: RenderBatch's, e.g. ``response=True``)."""
    ds = hf_read_lines(path, cache_dir=cache_dir or None)  # columns "line", "text": one row per "\n" line
    render = RenderBatch(column="text", **options)
    return ds.map(render, batched=True, batch_size=batch_size, num_proc=num_proc, features=render.features(ds.features))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("engine", choices=["ray", "datasets"])
    ap.add_argument("input", help="JSON lines, one request per line")
    ap.add_argument("output", help="directory for the Parquet output")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--response", action="store_true", help="add the response bytes column")
    args = ap.parse_args()
    opts = {"response": True} if args.response else {}
    if args.engine == "ray":
        import ray

        ray.init(address=os.environ.get("RAY_ADDRESS"), num_cpus=None if os.environ.get("RAY_ADDRESS") else 2)
        ray_pipeline(args.input, concurrency=args.workers, **opts).write_parquet(args.output)
        ray.shutdown()
    else:
        os.makedirs(args.output, exist_ok=True)
        hf_pipeline(args.input, num_proc=args.workers, **opts).to_parquet(os.path.join(args.output, "prompts.parquet"))


if __name__ == "__main__":
    main()
