"""Options several subcommands share, and the `ci`/`merge` options read into one typed object."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from adk_eval_gate.commands.help import OUTPUT_DIR, OutputDefault
from adk_eval_gate.core.errors import InputError

if TYPE_CHECKING:  # the stages load when a handler runs, so `--help` and a run's start stay instant
    from adk_eval_gate.config.loader import Workflow
    from adk_eval_gate.handshake.settings import PublishOptions

COMMENT_CHOICES = {"--comment-mode": ("update", "recreate"), "--comment-when": ("always", "changed", "failing")}


def config_option(required: bool = True, text: str = "the workflow YAML file") -> argparse.ArgumentParser:
    """`--config`, defaulting to the nearest eval-gate.yml at or above the working directory (config_file.py);
    `required` says whether a command without one found stops there or goes on without a config."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--config",
        metavar="FILE",
        help=f"{text} (default: eval-gate.yml here or in the nearest folder above, like git finds its repository)",
    )
    parent.set_defaults(config_wanted="required" if required else "optional")
    return parent


def add_offline_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--offline",
        action="store_true",
        help="no key, no network: play each agent's model from the eval set's expected turns, so its tools, wiring "
        "and our scoring run for real (not the model); such results never become or meet a baseline",
    )


def offline_workflow(workflow: Workflow, offline: bool) -> Workflow:
    """The workflow `--offline` runs (config/offline.py), said on the console first; else the workflow as read."""
    import sys

    from adk_eval_gate.config.offline import OFFLINE_LABEL, is_offline, played_offline

    workflow = played_offline(workflow, every_agent=offline)
    if is_offline(workflow):
        print(OFFLINE_LABEL, file=sys.stderr)
    return workflow


def publishing_options() -> argparse.ArgumentParser:
    """What `ci` and `merge` share: where files go and how the pull request comment behaves."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--output-dir",
        default=OutputDefault(OUTPUT_DIR),
        help=f"where results, comparison, report and JUnit go (default: {OUTPUT_DIR} beside the config)",
    )
    parent.add_argument("--no-comment", action="store_true", help="do not post the pull request comment")
    parent.add_argument("--label", action="append", help="an extra pull request label (e.g. the override label)")
    parent.add_argument("--comment-key", help="the sticky comment's key (default: the config's path in the repository)")
    # Over the config's `comment:` section.
    parent.add_argument("--comment-mode", help="update (edit our comment in place) or recreate (delete it, post anew)")
    parent.add_argument("--comment-when", help="always, changed (the report changed) or failing (the gate fails)")
    parent.add_argument(
        "--comment-author", help="the login the token posts as, when GitHub cannot say (another App's token)"
    )
    return parent


def publish_options(args: argparse.Namespace) -> PublishOptions:
    from adk_eval_gate.config.strict_section import comment_key_problem
    from adk_eval_gate.handshake.settings import PublishOptions
    from adk_eval_gate.run.shards import parse_shard

    # checked here rather than by argparse, so that the Action's inputs fail as one line (an annotation there)
    for option, choices in COMMENT_CHOICES.items():
        value = getattr(args, option.removeprefix("--").replace("-", "_"))
        if value is not None and value not in choices:
            raise InputError(
                None,
                option,
                f"{value!r} is not one of {', '.join(choices)}",
                f"use one of them (the Action's input is {option.removeprefix('--')})",
            )
    if args.comment_key is not None and (problem := comment_key_problem(args.comment_key)) is not None:
        raise InputError(None, "--comment-key", problem, "pass a short key on one line (Action input: comment-key)")
    return PublishOptions(
        config=args.config,
        output_dir=args.output_dir,
        post_comment=not args.no_comment,
        labels=args.label or [],
        quiet=getattr(args, "quiet", False),
        comment_key=args.comment_key,
        shard=parse_shard(args.shard) if getattr(args, "shard", None) else None,
        comment_mode=args.comment_mode,
        comment_when=args.comment_when,
        comment_author=args.comment_author,
        cases=getattr(args, "cases", None) or [],
    )
