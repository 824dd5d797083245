"""`paperchat` command line: ingest, ask, serve. Errors become one clean line and a non-zero exit."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Callable, Iterator, Sequence

from tqdm import tqdm

from rag.errors import PaperChatError
from rag.pipeline import DoneEvent, Filters, Pipeline, QuoteEvent, SourcesEvent, TokenEvent, WaitEvent, build_pipeline
from rag.settings import Settings, load_settings

EXIT_OK, EXIT_SKIPPED, EXIT_ERROR = 0, 1, 2
MAX_PROBLEMS_SHOWN = 20


@contextlib.contextmanager
def progress_bar(label: str, unit: str = "papers") -> Iterator[Callable[[int, int], None]]:
    """A progress callback (done, total) drawn by tqdm on stderr, with rate and ETA; quiet when stderr is not a
    terminal (logs, pipes, `ask --json`)."""
    bar = tqdm(desc=label, unit=f" {unit}", disable=None, file=sys.stderr, dynamic_ncols=True)

    def update(done: int, total: int) -> None:
        bar.total = total
        bar.update(done - bar.n)

    try:
        yield update
    finally:
        bar.close()


def _print_load_report(report, stats, elapsed: float, out=None) -> None:
    for problem in report.problems[:MAX_PROBLEMS_SHOWN]:
        print(problem, file=sys.stderr)
    if len(report.problems) > MAX_PROBLEMS_SHOWN:
        print(f"... and {len(report.problems) - MAX_PROBLEMS_SHOWN} more problems", file=sys.stderr)
    print(f"{report.summary()}; {stats} in {elapsed:.1f} s", file=out or sys.stdout)


def cmd_ingest_reviews(pipeline: Pipeline, args: argparse.Namespace) -> int:
    from rag.corpus.reviews import load_reviews

    t0 = time.monotonic()
    reviews, report = load_reviews(args.paths)
    new, orphans = pipeline.ingest_reviews(reviews)
    for problem in report.problems[:MAX_PROBLEMS_SHOWN]:
        print(problem, file=sys.stderr)
    if len(report.problems) > MAX_PROBLEMS_SHOWN:
        print(f"... and {len(report.problems) - MAX_PROBLEMS_SHOWN} more problems", file=sys.stderr)
    papers = len({r.paper_id for r in reviews})
    print(f"{len(reviews)} reviews of {papers} papers loaded ({new} new), {len(report.skipped)} lines skipped"
          + (f"; {orphans} reviews are of papers not in the index (kept; ingest those papers to use them)" if orphans else "")
          + f" in {time.monotonic() - t0:.1f} s")
    return EXIT_SKIPPED if report.skipped else EXIT_OK


def cmd_ingest(pipeline: Pipeline, args: argparse.Namespace) -> int:
    if args.reviews:
        return cmd_ingest_reviews(pipeline, args)
    t0 = time.monotonic()
    with progress_bar("ingest") as progress:
        report, stats = pipeline.ingest_files(args.paths, progress=progress, notice=_notice)
    _print_load_report(report, stats, time.monotonic() - t0)
    if args.prune and report.skipped:
        # a paper on a skipped line (or past a truncation) is one the user meant to keep
        print(f"not pruned: {len(report.skipped)} lines were skipped, and the papers on them would have been "
              "deleted. Fix them and run again.", file=sys.stderr)
    elif args.prune:
        removed = pipeline.prune(p.id for p in report.papers)
        print(f"pruned {removed} papers that are not in the given files")
    _build_topic_map(pipeline)
    return EXIT_SKIPPED if report.skipped else EXIT_OK


def _notice(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _ensure_ingested(pipeline: Pipeline) -> None:
    """On first start (an empty index), load the configured corpus and say what is happening (on stderr: `ask
    --json` keeps stdout for the JSON alone)."""
    if not pipeline.index.is_empty():
        return
    names = ", ".join(str(p) for p in pipeline.settings.corpus)
    _notice(f"First start: loading {names} into the index (once; the next starts skip this). With its shipped "
            "snapshot that takes about a minute; papers without one are embedded, which takes longer.")
    t0 = time.monotonic()
    with progress_bar("first start") as progress:
        first = pipeline.ensure_ingested(progress=progress, notice=_notice)
    if first:
        _print_load_report(*first, time.monotonic() - t0, out=sys.stderr)


def _build_topic_map(pipeline: Pipeline) -> None:
    """The topic map (rag.explore.topics) is built once after ingest and stored; a current one is kept as is."""
    from rag.explore.topics import ensure_map

    t0 = time.monotonic()
    topic_map, built = ensure_map(pipeline.index, pipeline.settings.data_dir)
    if built:
        print(f"topic map: {len(topic_map.ids)} papers in {len(topic_map.labels)} clusters in "
              f"{time.monotonic() - t0:.1f} s", file=sys.stderr)


def _filters(args: argparse.Namespace) -> Filters:
    return Filters(statuses=tuple(args.status or ()), primary_areas=tuple(args.area or ()),
                   keywords=tuple(args.keyword or ()))


def cmd_snapshot(pipeline: Pipeline, args: argparse.Namespace) -> int:
    """Ingest a corpus file (embedding what is new or changed), then write its index snapshot next to it."""
    t0 = time.monotonic()
    with progress_bar("ingest") as progress:
        report, stats = pipeline.ingest_files([args.corpus], progress=progress, notice=_notice)
    _print_load_report(report, stats, time.monotonic() - t0)
    if report.skipped:
        print("not written: lines were skipped; fix them first, so the snapshot covers the whole file.", file=sys.stderr)
        return EXIT_SKIPPED
    path, changed = pipeline.snapshot(args.corpus)
    size = path.stat().st_size / 1e6
    print(f"{path}: {'written' if changed else 'already up to date, not rewritten'} ({size:.1f} MB; "
          f"{pipeline.index.identity['embedding']}, chunks of {pipeline.index.identity['chunk_size']})")
    return EXIT_OK


def cmd_ask(pipeline: Pipeline, args: argparse.Namespace) -> int:
    _ensure_ingested(pipeline)
    answer = None
    for event in pipeline.stream(args.question, filters=_filters(args), k=args.k):
        if isinstance(event, DoneEvent):
            answer = event.answer
        elif args.json:
            continue
        elif isinstance(event, SourcesEvent):
            titles = "; ".join(f"[{s.n}] {s.paper.title}" for s in event.sources)
            more = "" if event.final else " (the model will refine this search)"
            print(f"Reading {len(event.sources)} papers{more}: {titles}\n", file=sys.stderr)
        elif isinstance(event, QuoteEvent):
            print(event.text + "\n", flush=True)
        elif isinstance(event, WaitEvent):
            print(f"(waiting for the model: {event.ahead} ahead)" if event.ahead else
                  f"(the model reads {event.prompt_tokens} tokens" + (
                      f", about {event.estimate_s:.0f} s)" if event.estimate_s is not None else ")"), file=sys.stderr)
        elif isinstance(event, TokenEvent):
            print(event.text, end="", flush=True)
    assert answer is not None
    if args.json:
        print(json.dumps(answer.to_json(), ensure_ascii=False, indent=2))
        return EXIT_OK
    print("\n")
    if answer.citations:
        print("References")
        for c in answer.citations:
            if c.review_id:  # a reviewer's opinion, not the paper's claim
                print(f"  [{c.n}] Review {c.review_id} of \u201c{c.title}\u201d  {c.url}")
            else:
                print(f"  [{c.n}] {c.title} ({c.status or 'status unknown'})  {c.url}")
    elif not answer.counted:
        print("No paper was cited.")
    if answer.unsupported_citations:
        marks = ", ".join(f"[{n}]" for n in answer.unsupported_citations)
        print(f"Citation check: {marks} taken out of sentences that paper does not support (the text above is "
              "as the model wrote it).")
    unsupported = [s for s in answer.sentences if s.supported is False]
    if unsupported:
        print("\nNot supported by the abstract it cites (check before relying on it):")
        for s in unsupported:
            missing = [*s.missing_numbers, *s.missing_names]
            why = f" (not in the abstract: {', '.join(missing)})" if missing else ""
            print(f"  - {s.text}{why}")
    uncited = [s for s in answer.sentences if s.uncited and s.supported is not False]
    if uncited:
        print("\nCites no paper (the model gave no source, so nothing checked it against the abstracts):")
        for s in uncited:
            print(f"  - {s.text}")
    return EXIT_OK


def cmd_serve(pipeline: Pipeline, args: argparse.Namespace) -> int:
    from rag.logs import setup_logging
    from ui.app import launch, login_for

    host = args.host or pipeline.settings.ui.host
    login_for(host, pipeline.settings.ui)  # a non-loopback address without a login: refuse before any work
    print(f"Log: {setup_logging(pipeline.settings).baseFilename}", file=sys.stderr)
    _ensure_ingested(pipeline)
    _build_topic_map(pipeline)
    print("Starting the model...", file=sys.stderr)
    t0 = time.monotonic()
    pipeline.warm_up()
    rate = pipeline.read_rate.tokens_per_s
    print(f"Model ready in {time.monotonic() - t0:.1f} s" + (f"; it reads {rate:.0f} prompt tokens/s here" if rate else ""),
          file=sys.stderr)
    launch(pipeline, host=host, port=args.port or pipeline.settings.ui.port)
    return EXIT_OK


def cmd_eval(pipeline: Pipeline, args: argparse.Namespace) -> int:
    from rag.eval.evaluate import format_report, run

    if not args.retrieval_only:
        print("paperchat eval: answering every question with the model too (minutes per question on CPU; "
              "--retrieval-only skips it).", file=sys.stderr)
    rows_file = open(args.rows, "w", encoding="utf-8") if args.rows else None

    def progress(row: dict) -> None:  # answers take long on CPU: each one is shown (and saved) as it comes
        print(f"  {row['qid']}: {row['seconds']} s{', declined' if row['refused'] else ''}", file=sys.stderr, flush=True)
        if rows_file:
            rows_file.write(json.dumps(row, ensure_ascii=False) + "\n")
            rows_file.flush()

    try:
        report, rows = run(pipeline, args.questions, args.corpus, answers=not args.retrieval_only, progress=progress,
                           kinds=args.kind or (), langs=args.lang or ())
        if rows_file:  # then the retrieval rows (the answer rows are in already)
            rows_file.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows if "answer" not in r)
    finally:
        if rows_file:
            rows_file.close()
    print(json.dumps(report, ensure_ascii=False, indent=2) if args.json else format_report(report))
    return EXIT_OK


def cmd_evalset(pipeline: Pipeline, args: argparse.Namespace) -> int:
    """Generate a labeled evaluation set from a corpus file with a snapshot (rag.eval.generate)."""
    from pathlib import Path

    from rag.eval.generate import load_for_generation, make_set, write_set

    corpus = Path(args.corpus)
    papers, snapshot = load_for_generation(corpus)
    llm = pipeline.llm.bind(max_tokens=80)  # a question of at most 30 words, with room

    def ask(prompt: str) -> str:
        from langchain_core.messages import HumanMessage

        return str(llm.invoke([HumanMessage(prompt)]).content)

    made = make_set(papers, snapshot, ask, args.seed, args.n, mix={args.kind: 1.0} if args.kind else None,
                    progress=lambda text: print(text, file=sys.stderr, flush=True))
    path = write_set(Path(args.out), made, papers, snapshot, args.seed, corpus)
    print(f"{len(made.questions)} questions in {path}; test corpus {Path(args.out) / 'corpus.jsonl.gz'} "
          f"({len(made.left_out)} papers left out). Next: PAPERCHAT_DATA_DIR=<empty dir> paperchat eval {path} "
          f"--corpus {Path(args.out) / 'corpus.jsonl.gz'}")
    return EXIT_OK


def cmd_fetch(settings: Settings, args: argparse.Namespace, transport=None) -> int:
    from rag.corpus.fetch import HttpxTransport, fetch_venue

    cfg = settings.openreview
    if transport is None:
        password = cfg.password.get_secret_value() if cfg.password else None
        transport = HttpxTransport(cfg.base_url, cfg.username, password)
    parts = args.venue.split("/")  # ICLR.cc/2026/Conference -> iclr2026.jsonl
    out = args.output or parts[0].split(".")[0].lower() + "".join(parts[1:2]) + ".jsonl"
    t0 = time.monotonic()
    try:
        with progress_bar("fetch", unit="notes") as progress:
            result = fetch_venue(transport, args.venue, out, accepted_only=args.accepted_only,
                                 with_reviews=args.with_reviews, progress=progress)
    except KeyboardInterrupt:
        print("\npaperchat: interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    for problem in result.skipped[:MAX_PROBLEMS_SHOWN]:
        print(f"skipped {problem}", file=sys.stderr)
    resumed = f" (resumed at note {result.resumed_from})" if result.resumed_from else ""
    reviews = f"; reviews of {result.reviews} papers in {out.removesuffix('.jsonl')}.reviews.jsonl" \
        if args.with_reviews else ""
    print(f"wrote {result.papers} papers to {out}{reviews} in {time.monotonic() - t0:.1f} s{resumed}; "
          f"next: paperchat ingest {out}")
    return EXIT_SKIPPED if result.skipped else EXIT_OK


def cmd_import(settings: Settings, args: argparse.Namespace) -> int:
    from pathlib import Path

    from rag.corpus.paperlists import import_file, write_jsonl

    src = Path(args.file)
    out = args.output or src.name.removesuffix(".gz").removesuffix(".json").removesuffix(".jsonl") + ".corpus.jsonl"
    report = import_file(src)
    for line in report.lines(src.name):
        print(line, file=sys.stderr)
    write_jsonl(report.records, out)
    print(f"wrote {len(report.records)} papers to {out}; next: paperchat ingest {out}")
    return EXIT_SKIPPED if report.skipped else EXIT_OK


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="paperchat", description="Chat with the ICLR 2026 papers, offline, with citations.")
    sub = parser.add_subparsers(dest="command", required=True)

    ingest = sub.add_parser("ingest", help="load corpus files into the index")
    ingest.add_argument("paths", nargs="+", help="corpus JSONL, CSV or OpenReview notes (JSON/JSONL), plain or .gz, "
                                                 "e.g. corpus/iclr2026_seed.jsonl")
    ingest.add_argument("--reviews", action="store_true",
                        help="the files hold official reviews ({\"id\", \"reviews\": [...]} per line, as "
                             "../shared/data/reviews.jsonl.gz or `paperchat fetch --with-reviews` writes)")
    ingest.add_argument("--prune", action="store_true",
                        help="then delete from the index every paper that is not in these files")
    ingest.set_defaults(func=cmd_ingest)

    ask = sub.add_parser("ask", help="answer one question with cited papers")
    ask.add_argument("question")
    ask.add_argument("--json", action="store_true", help='print {"answer", "citations", "retrieved"} as JSON')
    ask.add_argument("--k", type=int, default=None, help="papers to retrieve (default: PAPERCHAT_RETRIEVAL__K)")
    ask.add_argument("--status", action="append", help="only papers with this status (repeatable), e.g. Oral")
    ask.add_argument("--area", action="append", help="only papers in this primary area (repeatable)")
    ask.add_argument("--keyword", action="append",
                     help="only papers that list this keyword, case-insensitive (repeatable: all must match)")
    ask.set_defaults(func=cmd_ask)

    snap = sub.add_parser("snapshot", help="index snapshots (the vectors shipped next to a corpus file)")
    snap_sub = snap.add_subparsers(dest="action", required=True)
    build = snap_sub.add_parser("build", help="ingest a corpus file, then write <name>.index.npz next to it")
    build.add_argument("corpus", nargs="?", default="corpus/iclr2026.jsonl.gz",
                       help="the corpus file (default corpus/iclr2026.jsonl.gz)")
    build.set_defaults(func=cmd_snapshot)

    serve = sub.add_parser("serve", help="start the web app")
    serve.add_argument("--host", default=None, help="bind address (default 127.0.0.1; any other needs "
                                                    "PAPERCHAT_UI__AUTH_USER and PAPERCHAT_UI__AUTH_PASSWORD)")
    serve.add_argument("--port", type=int, default=None, help="port (default 7860)")
    serve.set_defaults(func=cmd_serve)

    ev = sub.add_parser("eval", help="retrieval and answer figures on labeled questions (see ../shared/eval/README.md)")
    ev.add_argument("questions", help="questions JSONL, e.g. ../shared/eval/dev/questions.jsonl")
    ev.add_argument("--corpus", action="append", help="corpus file(s) to ingest first (repeatable)")
    ev.add_argument("--retrieval-only", action="store_true", help="retrieval figures only: no answer is written (fast)")
    ev.add_argument("--rows", help="also write one JSON line per question (and per answer) to this file")
    ev.add_argument("--kind", action="append", choices=["lookup", "compare", "followup", "filtered", "unanswerable"],
                    help="only questions of this kind (repeatable)")
    ev.add_argument("--lang", action="append", help="only questions in this language, e.g. zh (repeatable)")
    ev.add_argument("--json", action="store_true", help="one JSON object: lookup, compare, followup, filtered, unanswerable")
    ev.set_defaults(func=cmd_eval)

    gen = sub.add_parser("evalset", help="generate a labeled evaluation set from a corpus (the model writes questions)")
    gen.add_argument("--corpus", default="corpus/iclr2026.jsonl.gz", help="a corpus file with its index snapshot")
    gen.add_argument("--seed", type=int, default=1)
    gen.add_argument("--n", type=int, default=320, help="questions to make")
    gen.add_argument("--kind", choices=["lookup", "leave_out", "near_miss", "compare", "followup", "broad"],
                     help="make only this kind (e.g. followup: conversations only); default: the usual mix")
    gen.add_argument("--out", required=True, help="folder for questions.jsonl, the test corpus and its snapshot")
    gen.set_defaults(func=cmd_evalset)

    fetch = sub.add_parser("fetch", help="download a venue's papers from OpenReview (needs the internet; resumable)")
    fetch.add_argument("--venue", required=True, help="OpenReview venue id, e.g. ICLR.cc/2026/Conference")
    fetch.add_argument("--accepted-only", action="store_true", help="only accepted papers (Oral / Poster)")
    fetch.add_argument("--with-reviews", action="store_true",
                       help="also official reviews (to <out stem>.reviews.jsonl) and decisions (joined to status)")
    fetch.add_argument("-o", "--output", help="corpus JSONL to write (default e.g. iclr2026.jsonl)")
    fetch.set_defaults(func=cmd_fetch, no_pipeline=True)

    imp = sub.add_parser("import",
                         help="convert a papercopilot paperlists JSON or OpenReview notes dump to corpus JSONL")
    imp.add_argument("file", help="e.g. paperlists/iclr/iclr2026.json (plain or .gz)")
    imp.add_argument("-o", "--output", help="corpus JSONL to write (default <file stem>.corpus.jsonl)")
    imp.set_defaults(func=cmd_import, no_pipeline=True)
    return parser


def main(argv: Sequence[str] | None = None,
         pipeline_factory: Callable[[Settings], Pipeline] = build_pipeline) -> int:
    args = make_parser().parse_args(argv)
    settings = None
    try:
        settings = load_settings()
        if getattr(args, "no_pipeline", False):  # fetch needs no index or model
            return args.func(settings, args)
        with pipeline_factory(settings) as pipeline:
            return args.func(pipeline, args)
    except PaperChatError as exc:
        from rag.logs import redact

        print(f"paperchat: error: {redact(str(exc), settings.secrets() if settings else [])}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("\npaperchat: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
