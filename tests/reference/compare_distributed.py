#!/usr/bin/env python3
"""Issue 12's distributed evidence as Markdown tables: TrainScope beside the plain PyTorch
reference (distributed_reference.py), from the files scripts/distributed-evidence.sh writes.

  compare_distributed.py --ref ref.jsonl [--ts-allreduce ts-allreduce.json]
                         [--ts-ddp ts-ddp.jsonl] [--ts-single ts-single.jsonl]

  --ref           the reference's JSON lines (allreduce, ddp, ddp --zero, single)
  --ts-allreduce  `trainscope-cli distributed allreduce --format json` (one document with rows)
  --ts-ddp        `trainscope-cli distributed ddp --format json`: one JSON object per point
  --ts-single     `trainscope-cli bench --mode train --jsonl`: the one-GPU baseline

Tables: all-reduce busbw per size and dtype (target: ours ≥ 0.95× torch.distributed at 256 MiB
and 1 GiB); the DDP step per strategy against PyTorch DDP (target: bucketed ≤ 1.05×), sharded
against ZeroRedundancyOptimizer; the hidden-communication share of every strategy; DDP's overhead
over one GPU (target: ours ≤ 10% in bf16); ZeRO's memory per rank; where either side ran
compiled, compiled DDP (`distributed ddp --exec compiled`: the step and its collectives as CUDA
graphs) against PyTorch DDP + torch.compile at its best mode (`ddp --compile MODE`; target: ours
faster, the best of our compiled strategies against the best mode). The eager tables hold the
eager points only (the reference's rows without --compile, ours with exec eager).
Exit status 1 when a target is missed or a point it needs is missing, else 0.
"""
import argparse
import json
import sys

MIB = 1 << 20
ALLREDUCE_TARGET, ALLREDUCE_TARGET_FROM = 0.95, 256 * MIB
DDP_TARGET = 1.05
OVERHEAD_TARGET = 0.10


def read_json_objects(path):
    """Every JSON object in a file: the whole file as one document (a list, or an object with
    "rows"), else one object per line (lines that are not JSON objects are skipped)."""
    if not path:
        return []
    try:
        text = open(path).read()
    except OSError:
        return []
    try:
        doc = json.loads(text)
        if isinstance(doc, list):
            return [d for d in doc if isinstance(d, dict)]
        if isinstance(doc, dict):
            return [doc]
    except json.JSONDecodeError:
        pass
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


# ---- TrainScope's outputs ----

def trainscope_allreduce_rows(objs):
    rows = []
    for o in objs:
        rows.extend(o.get("rows", [o] if "busbw_gbps" in o else []))
    return rows


# ======================================================================================
# TrainScope's DDP JSON — ADAPT HERE when `trainscope-cli distributed ddp --format json`
# settles. Assumed: one JSON object per point and line, with at least
#   strategy ("naive"|"flat"|"overlap"|"bucketed"), bucket_mb (number, bucketed),
#   sharded (bool), precision ("fp32"|"bf16"), world_size, step_ms, step_std_ms, forward_ms,
#   backward_ms, comm_wait_ms, hidden_share (0..1; negative/null: not measured),
#   optimizer_ms, memory_peak (bytes, the largest rank's), status ("ok"|...), error;
# optionally optimizer_state_bytes. Tolerated: the fields nested under "point"/"spec" and
# "summary" (as DistributedPoint/DdpSpec and DdpSummary in engine/src/distributed/distributed.h),
# a whole document whose "rows"/"points" list holds the points, and other lines (progress,
# steps) without a strategy, which are skipped.
# Returns None for a line that is not a point, else a flat dict with exactly the keys above.
# ======================================================================================
def normalize_trainscope_ddp(o):
    flat = {}
    for part in ("point", "spec", "ddp", "summary", "result"):
        if isinstance(o.get(part), dict):
            flat.update(o[part])
            if isinstance(o[part].get("ddp"), dict):
                flat.update(o[part]["ddp"])
    flat.update({k: v for k, v in o.items() if not isinstance(v, dict)})
    if o.get("type") not in (None, "ddp", "result", "point", "summary") or "strategy" not in flat:
        return None
    if "step_ms" not in flat and "total" in o and isinstance(o["total"], dict):
        flat["step_ms"] = o["total"].get("mean")
    sharded = flat.get("sharded", flat.get("shard_optimizer", False))
    if isinstance(sharded, str):
        sharded = sharded.lower() in ("on", "true", "1", "yes")
    precision = str(flat.get("precision", "")).lower().replace("bfloat16", "bf16").replace("float32", "fp32")
    hidden = flat.get("hidden_share")
    return {
        "strategy": flat["strategy"],
        "bucket_mb": flat.get("bucket_mb") if flat["strategy"] == "bucketed" else None,
        "sharded": bool(sharded),
        "precision": precision,
        "world_size": flat.get("world_size"),
        "step_ms": flat.get("step_ms"),
        "step_std_ms": flat.get("step_std_ms"),
        "step_median_ms": flat.get("step_median_ms"),
        "forward_ms": flat.get("forward_ms"),
        "backward_ms": flat.get("backward_ms"),
        "comm_wait_ms": flat.get("comm_wait_ms"),
        "hidden_share": hidden if isinstance(hidden, (int, float)) and hidden >= 0 else None,
        "optimizer_ms": flat.get("optimizer_ms"),
        "memory_peak": flat.get("memory_peak"),
        "optimizer_state_bytes": flat.get("optimizer_state_bytes"),
        "status": str(flat.get("status", "ok")).lower(),
        "error": flat.get("error") or "",
        "exec": str(flat.get("exec", "eager")),
    }


def trainscope_ddp_points(objs):
    # One document with a list of points ({"experiment": "ddp", "rows": [...]}, as `distributed
    # allreduce --format json` prints its rows) reads as those points.
    flat = []
    for o in objs:
        lists = [o[k] for k in ("rows", "points", "results") if isinstance(o.get(k), list)]
        if lists:
            flat.extend(x for lst in lists for x in lst if isinstance(x, dict))
        else:
            flat.append(o)
    return [p for p in (normalize_trainscope_ddp(o) for o in flat) if p is not None]
# ======================================================================================
# (end of TrainScope's DDP JSON)


def trainscope_single(objs, stat="mean"):
    """`bench --jsonl` result lines: precision → the eager step's mean (or median) ms (the baseline of
    the eager DDP points; a compiled one-GPU step, `--exec eager,compiled`, is not theirs)."""
    out = {}
    for o in objs:
        if (o.get("type") == "result" and o.get("status", "ok") == "ok"
                and o["config"].get("exec", "eager") == "eager"):
            out[o["config"]["precision"]] = o["total"].get(stat)
    return out


# ---- formatting ----

def f2(v, nd=2):
    return "-" if v is None else f"{v:.{nd}f}"


def mib(v):
    return "-" if not v else f"{v / MIB:.0f}"


def size_name(b):
    for unit, name in ((1 << 30, "GiB"), (MIB, "MiB"), (10**9, "GB"), (10**6, "MB"), (1024, "KiB")):
        if b % unit == 0:
            return f"{b // unit} {name}"
    return f"{b} B"


def verdict(ok):
    return "met" if ok else "**missed**"


def strategy_name(p):
    s = p["strategy"]
    if s == "bucketed" and p.get("bucket_mb") is not None:
        s += f" {p['bucket_mb']:g} MB"
    return s + (" + ZeRO" if p["sharded"] else "")


# ---- the tables ----

def allreduce_table(ref, ts, problems):
    ref_rows = {(r["bytes"], r["dtype"]): r for r in ref if r.get("experiment") == "allreduce"}
    ts_rows = {(r["bytes"], r["dtype"]): r for r in ts}
    if not ref_rows and not ts_rows:
        return
    world = next((r["world_size"] for r in list(ref_rows.values()) + list(ts_rows.values())), "?")
    print(f"### All-reduce, {world} ranks: bus bandwidth (GB/s), TrainScope beside torch.distributed\n")
    print("| size | bytes | dtype | torch ms | ours ms | torch busbw | ours busbw | ours/torch | target (≥ 0.95 from 256 MiB) |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---|")
    for key in sorted(ref_rows.keys() | ts_rows.keys(), key=lambda k: (k[1] != "fp32", k[1], k[0])):
        r, t = ref_rows.get(key), ts_rows.get(key)
        ratio = t["busbw_gbps"] / r["busbw_gbps"] if r and t and r["busbw_gbps"] > 0 else None
        target = ""
        if key[0] >= ALLREDUCE_TARGET_FROM:
            ok = ratio is not None and ratio >= ALLREDUCE_TARGET
            target = verdict(ok) if ratio is not None else "**missing**"
            if not ok:
                problems.append(f"all-reduce {size_name(key[0])} {key[1]}: "
                                + (f"ratio {ratio:.3f} < {ALLREDUCE_TARGET}" if ratio is not None else "a side is missing"))
        print(f"| {size_name(key[0])} | {key[0]} | {key[1]} | {f2(r and r['time_ms'], 3)} | {f2(t and t['time_ms'], 3)} "
              f"| {f2(r and r['busbw_gbps'])} | {f2(t and t['busbw_gbps'])} | {f2(ratio, 3)} | {target} |")
    print()


def eager_ref(r):
    return r.get("compile", "none") in (None, "none")


def ref_ddp(ref, zero):
    return {r["precision"]: r for r in ref
            if r.get("experiment") == "ddp" and bool(r.get("sharded")) == zero and eager_ref(r)}


def compiled_table(ref, ts, problems):
    """Ours compiled (CUDA graphs holding the collectives) against PyTorch DDP + torch.compile at
    its best mode (the fastest of the modes run), unsharded; PyTorch's eager DDP beside."""
    refs = [r for r in ref if r.get("experiment") == "ddp" and not r.get("sharded") and not eager_ref(r)]
    if not refs and not ts:
        return
    eager = ref_ddp(ref, False)
    print("### Compiled DDP vs PyTorch DDP + torch.compile (best mode): the step (ms, per step the slowest "
          "rank, mean over steps)\n")
    print("| precision | ours (compiled) | ours step | PyTorch DDP + torch.compile | its step | PyTorch DDP eager "
          "| ours/best compile | target (ours faster) |")
    print("|---|---|---:|---|---:|---:|---:|---|")
    for prec in sorted({p["precision"] for p in ts} | {r["precision"] for r in refs}):
        modes = {r["compile"]: r for r in refs if r["precision"] == prec}
        ok_modes = {m: r for m, r in modes.items() if r.get("status") == "ok" and r.get("step_ms")}
        best = min(ok_modes.items(), key=lambda kv: kv[1]["step_ms"]) if ok_modes else None
        tried = ", ".join(f"{m} {f2(r['step_ms'], 1) if m in ok_modes else r.get('status')}" for m, r in sorted(modes.items()))
        ours = [p for p in ts if p["precision"] == prec and not p["sharded"]]
        fastest = min((p for p in ours if p["status"] == "ok" and p["step_ms"]), key=lambda p: p["step_ms"], default=None)
        e = eager.get(prec)
        e_ms = f2(e["step_ms"], 1) if e and e.get("status") == "ok" else "-"
        for p in ours or [None]:
            ok_p = p is not None and p["status"] == "ok" and p["step_ms"]
            ratio = p["step_ms"] / best[1]["step_ms"] if ok_p and best else None
            target = ""
            if p is fastest:
                target = verdict(ratio < 1.0) if ratio is not None else "**missing**"
            name = "(not run)" if p is None else strategy_name(p)
            step = f2(p["step_ms"], 1) if ok_p else ("-" if p is None else f"{p['status']}: {p['error']}".strip(": "))
            label = f"{best[0]} (of: {tried})" if best else (tried or "(not run)")
            print(f"| {prec} | {name} | {step} | {label} | {f2(best and best[1]['step_ms'], 1)} | {e_ms} "
                  f"| {f2(ratio, 3)} | {target} |")
        ratio = fastest["step_ms"] / best[1]["step_ms"] if fastest and best else None
        if ratio is None:
            problems.append(f"compiled DDP {prec}: " + ("no PyTorch DDP + torch.compile point" if fastest
                                                        else "no TrainScope compiled point"))
        elif ratio >= 1.0:
            problems.append(f"compiled DDP {prec}: ours {strategy_name(fastest)} is {ratio:.3f}× "
                            f"PyTorch DDP + torch.compile ({best[0]})")
    print()


def ddp_table(ref, ts, problems):
    ddp, zero = ref_ddp(ref, False), ref_ddp(ref, True)
    if not ddp and not zero and not ts:
        return
    print("### Data-parallel step (ms, per step the slowest rank, mean over steps): TrainScope's strategies "
          "beside PyTorch DDP (default buckets) and ZeroRedundancyOptimizer\n")
    print("| precision | strategy | ours step | ± | PyTorch | PyTorch step | ours/PyTorch | target (bucketed ≤ 1.05) |")
    print("|---|---|---:|---:|---|---:|---:|---|")
    for prec in sorted({p["precision"] for p in ts} | ddp.keys() | zero.keys()):
        for ref_row, label in ((ddp.get(prec), "DDP"), (zero.get(prec), "DDP + ZeRO")):
            if ref_row and ref_row.get("status") != "ok":
                print(f"| {prec} | - | - | - | {label} | {ref_row.get('status')} | - | |")
        for p in [p for p in ts if p["precision"] == prec]:
            r = (zero if p["sharded"] else ddp).get(prec)
            label = "DDP + ZeRO" if p["sharded"] else "DDP"
            rs = r["step_ms"] if r and r.get("status") == "ok" else None
            ok_t = p["status"] == "ok" and p["step_ms"] is not None
            ratio = p["step_ms"] / rs if ok_t and rs else None
            target = ""
            if p["strategy"] == "bucketed" and not p["sharded"]:
                ok = ratio is not None and ratio <= DDP_TARGET
                target = verdict(ok) if ratio is not None else "**missing**"
                if not ok:
                    problems.append(f"DDP {strategy_name(p)} {prec}: "
                                    + (f"ratio {ratio:.3f} > {DDP_TARGET}" if ratio is not None else "a side is missing"))
            ours = f2(p["step_ms"], 1) if ok_t else f"{p['status']}: {p['error']}".strip(": ")
            print(f"| {prec} | {strategy_name(p)} | {ours} | {f2(p['step_std_ms'], 1) if ok_t else '-'} | {label} "
                  f"| {f2(rs, 1)} | {f2(ratio, 3)} | {target} |")
        if not any(p["precision"] == prec for p in ts):
            for r, label in ((ddp.get(prec), "DDP"), (zero.get(prec), "DDP + ZeRO")):
                if r and r.get("status") == "ok":
                    print(f"| {prec} | (TrainScope not run) | - | - | {label} | {f2(r['step_ms'], 1)} | - | |")
    if not any(p["strategy"] == "bucketed" and not p["sharded"] for p in ts):
        problems.append("DDP: no TrainScope bucketed point")
    print()


def hidden_table(ref, ts):
    rows = [p for p in ts if p["status"] == "ok"]
    refs = [r for r in ref if r.get("experiment") == "ddp" and r.get("status") == "ok" and eager_ref(r)]
    if not rows and not refs:
        return
    print("### Hidden communication: the share of gradient communication that ran while backward did\n")
    print("| precision | strategy | forward ms | backward ms | comm wait ms | optimizer ms | hidden share |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for prec in sorted({p["precision"] for p in rows} | {r["precision"] for r in refs}):
        for p in [p for p in rows if p["precision"] == prec]:
            share = "not measured" if p["hidden_share"] is None else f"{100 * p['hidden_share']:.0f}%"
            print(f"| {prec} | {strategy_name(p)} | {f2(p['forward_ms'], 1)} | {f2(p['backward_ms'], 1)} "
                  f"| {f2(p['comm_wait_ms'], 1)} | {f2(p['optimizer_ms'], 1)} | {share} |")
        for r in [r for r in refs if r["precision"] == prec]:
            h = r.get("hidden_estimate")
            share = f"{100 * h['hidden_share']:.0f}% (estimate¹)" if h else "not estimated"
            print(f"| {prec} | PyTorch {'DDP + ZeRO' if r.get('sharded') else 'DDP'} | {f2(r['forward_ms'], 1)} "
                  f"| {f2(r['backward_ms'], 1)} (incl. the wait) | - | {f2(r['optimizer_ms'], 1)} | {share} |")
    print("\n¹ PyTorch does not report it: exposed = its step − the same step under `no_sync()`; "
          "total = DDP's buckets all-reduced alone; hidden share = 1 − exposed/total.\n")


def overhead_table(ref, ts, ts_single, problems, ts_single_median=None):
    ddp = ref_ddp(ref, False)
    single = {r["precision"]: r for r in ref
              if r.get("experiment") == "single" and r.get("status") == "ok" and eager_ref(r)}
    if not (ddp or single or ts or ts_single):
        return
    print("### Data parallelism's overhead over one GPU (the same per-rank batch): step / one-GPU step − 1\n")
    # The medians beside the means: where the host's launches bound the step (bf16 at small batches:
    # docs/BENCHMARKS.md, "Why bf16 steps vary"), a few slow steps move the mean, not the median.
    ts_single_median = ts_single_median or {}
    print("| precision | who | DDP step ms | one GPU ms | overhead | overhead by medians | target (ours ≤ 10% in bf16) |")
    print("|---|---|---:|---:|---:|---:|---|")
    for prec in sorted(ddp.keys() | single.keys() | {p["precision"] for p in ts} | ts_single.keys()):
        r, s = ddp.get(prec), single.get(prec)
        if r and r.get("status") == "ok" and s:
            print(f"| {prec} | PyTorch DDP | {f2(r['step_ms'], 1)} | {f2(s['step_ms'], 1)} "
                  f"| {100 * (r['step_ms'] / s['step_ms'] - 1):.1f}% | - | |")
        base = ts_single.get(prec)
        ours = [p for p in ts if p["precision"] == prec and not p["sharded"] and p["status"] == "ok" and p["step_ms"]]
        for p in ours:
            over = p["step_ms"] / base - 1 if base else None
            target = ""
            if prec == "bf16" and p["strategy"] == "bucketed":
                target = verdict(over is not None and over <= OVERHEAD_TARGET) if over is not None else "**missing**"
            base_median = ts_single_median.get(prec)
            by_median = (p["step_median_ms"] / base_median - 1
                         if p.get("step_median_ms") and base_median else None)
            print(f"| {prec} | TrainScope {strategy_name(p)} | {f2(p['step_ms'], 1)} | {f2(base, 1)} "
                  f"| {'-' if over is None else f'{100 * over:.1f}%'} "
                  f"| {'-' if by_median is None else f'{100 * by_median:.1f}%'} | {target} |")
        if prec == "bf16":
            bucketed = [p["step_ms"] / base - 1 for p in ours if p["strategy"] == "bucketed" and base]
            if not bucketed:
                problems.append("overhead bf16: no TrainScope bucketed point or one-GPU baseline")
            elif min(bucketed) > OVERHEAD_TARGET:
                problems.append(f"overhead bf16: the best bucketed is {100 * min(bucketed):.1f}% > 10%")
    print()


def zero_memory_table(ref, ts):
    ddp, zero = ref_ddp(ref, False), ref_ddp(ref, True)
    rows = [p for p in ts if p["status"] == "ok"]
    if not (zero or any(p["sharded"] for p in rows)):
        return
    print("### Optimizer sharding (ZeRO stage 1): memory per rank (MiB, the largest rank's)\n")
    print("| precision | who | peak unsharded | peak sharded | saved | optimizer state unsharded | optimizer state sharded |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for prec in sorted(ddp.keys() | zero.keys() | {p["precision"] for p in rows}):
        r, z = ddp.get(prec), zero.get(prec)
        if z and z.get("status") == "ok":
            saved = (r["memory_peak"] - z["memory_peak"]) if r and r.get("status") == "ok" and r["memory_peak"] else None
            print(f"| {prec} | PyTorch ZeroRedundancyOptimizer | {mib(r and r.get('memory_peak'))} | {mib(z['memory_peak'])} "
                  f"| {mib(saved)} | {mib(r and r.get('optimizer_state_bytes'))} | {mib(z.get('optimizer_state_bytes'))} |")
        for s in [p for p in rows if p["precision"] == prec and p["sharded"]]:
            twin = next((p for p in rows if p["precision"] == prec and not p["sharded"] and p["strategy"] == s["strategy"]
                         and p["bucket_mb"] == s["bucket_mb"]), None)
            saved = twin["memory_peak"] - s["memory_peak"] if twin and twin["memory_peak"] and s["memory_peak"] else None
            print(f"| {prec} | TrainScope {strategy_name(s)} | {mib(twin and twin['memory_peak'])} | {mib(s['memory_peak'])} "
                  f"| {mib(saved)} | {mib(twin and twin.get('optimizer_state_bytes'))} | {mib(s.get('optimizer_state_bytes'))} |")
    print()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ref", required=True)
    p.add_argument("--ts-allreduce")
    p.add_argument("--ts-ddp")
    p.add_argument("--ts-single")
    a = p.parse_args(argv)
    ref = read_json_objects(a.ref)
    ts_ar = trainscope_allreduce_rows(read_json_objects(a.ts_allreduce))
    points = trainscope_ddp_points(read_json_objects(a.ts_ddp))
    ts_ddp = [p for p in points if p["exec"] == "eager"]
    ts_compiled = [p for p in points if p["exec"] != "eager"]
    ts_single = trainscope_single(read_json_objects(a.ts_single))
    ts_single_median = trainscope_single(read_json_objects(a.ts_single), "median")
    problems = []
    allreduce_table(ref, ts_ar, problems)
    ddp_table(ref, ts_ddp, problems)
    hidden_table(ref, ts_ddp)
    overhead_table(ref, ts_ddp, ts_single, problems, ts_single_median)
    zero_memory_table(ref, ts_ddp)
    compiled_table(ref, ts_compiled, problems)
    if problems:
        print("Targets missed or not measured:\n" + "\n".join(f"- {x}" for x in problems))
        return 1
    print("Every target met.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
