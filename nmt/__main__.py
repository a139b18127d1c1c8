"""One command-line tool with a subcommand per task: ``python -m nmt SUBCOMMAND [options]``.

    python -m nmt --help                       # the subcommands
    python -m nmt translate --checkpoint checkpoints/m30k-en-fr-rnnsearch.pt --beam 5 < in.en > out.fr
    python -m nmt evaluate --checkpoint … --data evalsets/multi30k --split test2016 --beam 5
    python -m nmt translate --help             # one subcommand's options

Each subcommand runs the ``main`` of its module in :mod:`nmt.tools` (the old ``python -m nmt.translate``
and the others still work for one release, with a note): a problem with what the user gave ends in one
``error: …`` line and exit status 2 (:func:`nmt.tools.cli.run`). Subcommands are imported only when run,
so ``--help`` answers at once.
"""

from __future__ import annotations

import importlib
import sys

SUBCOMMANDS: dict[str, tuple[str, str]] = {  # name: (module, one line for --help)
    "translate": ("nmt.tools.translate",
                  "translate sentences from stdin to stdout (greedy or beam, <unk> replacement)"),
    "evaluate": ("nmt.tools.evaluate", "BLEU of a checkpoint on a corpus split, with bootstrap confidence intervals"),
    "experiment": ("nmt.tools.experiment", "several checkpoints on several test sets into one results file"),
    "paired": ("nmt.tools.paired", "is model A really better than B? paired bootstrap of BLEU and chrF, by length"),
    "align": ("nmt.tools.align", "alignment error rate (AER) of α against gold Sure / Possible links"),
    "faithfulness": ("nmt.tools.faithfulness", "attributions beside α on a split, and the attention-debate tests"),
    "export": ("nmt.tools.export", "ship a training run: scored, verified checkpoints (fp16, int8) and results"),
    "timeline": ("nmt.tools.timeline", "print or ship a training timeline (the Watch it learn page)"),
    "seal": ("nmt.tools.seal", "seal a checkpoint written before checkpoints recorded a digest of their contents"),
    "serve": ("nmt.tools.serve", "serve the app (--class: to a class's phones on this network, with rooms and votes)"),
    "import": ("nmt.tools.importers",
               "convert a model trained with another toolkit (joeynmt DIR | onmt CKPT --out NAME.pt)"),
}


def usage() -> str:
    """The top-level help: the subcommands, one line each."""
    width = max(map(len, SUBCOMMANDS))
    lines = [f"  {name:<{width}}  {line}" for name, (_, line) in SUBCOMMANDS.items()]
    return ("usage: python -m nmt SUBCOMMAND [options]   (python -m nmt SUBCOMMAND --help: its options)\n\n"
            "subcommands:\n" + "\n".join(lines) + "\n\nTraining: python train.py --help.")


def main(argv: list[str] | None = None) -> int:
    """Run the subcommand named by ``argv[0]`` with the rest of ``argv``; help or a one-line error otherwise."""
    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    name, rest = args[0], args[1:]
    if name not in SUBCOMMANDS:
        print(f"error: unknown subcommand {name!r}; one of: {', '.join(SUBCOMMANDS)}", file=sys.stderr)
        return 2
    module = importlib.import_module(SUBCOMMANDS[name][0])
    precheck = getattr(module, "precheck", None)  # refusals that need no torch (nmt.tools.importers)
    code = precheck(rest) if precheck is not None else None
    if code is not None:
        return code
    from nmt.tools import cli

    sys.argv = [f"python -m nmt {name}", *rest]  # argparse's usage line names the subcommand
    return cli.run(lambda: module.main(rest))


if __name__ == "__main__":
    sys.exit(main())
