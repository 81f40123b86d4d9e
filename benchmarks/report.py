"""bench.md and the site's benchmarks table, rendered from bench.json: one row per measure, with its goal where it has
one and the machine it was measured on."""
from __future__ import annotations

from benchmarks.stamps import stamped_only
from benchmarks.time_to_quality import METRIC, _value, ttq_summary

GOALS = dict(roof_fraction=0.70, train_speedup=1.5, train_memory=5.0, flat_in_T=1.5, taylor_speedup=5.0, generation_speedup=10.0,
             context_step_speedup=5.0, context_generation_flat=1.5)


def _mib(b): return f"{b / 2**20:.1f} MiB" if b >= 2**20 else f"{b / 2**10:.0f} KiB"
def _ms(t): return f"{t:.3g} s" if t >= 1 else f"{t * 1e3:.3g} ms"
def _yes(ok): return "yes" if ok else "**no**"


def _cpu(name: str) -> str:
    "A CPU's model name without trademarks and clock: 'Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz' -> 'Intel Xeon Gold 6338'"
    for x in ("(R)", "(TM)", "(tm)", " CPU"): name = name.replace(x, "")
    return name.split(" @")[0].strip()


def _cores(m: dict) -> str:
    used = m.get("cores_used", m["cores"])
    return f"{m['cores']} cores" if used == m["cores"] else f"{used} of {m['cores']} cores"


def tag(*stamps: dict | None) -> str:
    """The 'measured on' cell of one or more machine stamps: CPU, cores (used of the machine's), the load average
    at the start and end (its range over several runs), the date (range)."""
    ms = [m for m in stamps if m]
    if not ms: return ""
    cpu = ", ".join(sorted({_cpu(m["cpu"]) for m in ms}))
    cores = ", ".join(sorted({_cores(m) for m in ms}))
    if len(ms) == 1: load_ = f"load {ms[0]['load_start']:.1f}→{ms[0]['load_end']:.1f}"
    else:
        ls = [m[k] for m in ms for k in ("load_start", "load_end")]
        load_ = f"load {min(ls):.1f}–{max(ls):.1f}"
    days = sorted({m["date"][:10] for m in ms})
    return f"{cpu}, {cores}{' each' if len(ms) > 1 else ''}, {load_}, {days[0]}" + (f" to {days[-1]}" if len(days) > 1 else "")


def table(r: dict) -> list[list[str]]:
    "Rows (measure, value, goal, met?, measured on) of the Markdown table; sections missing from `r` are skipped."
    r = stamped_only(r)
    rows = []
    on = lambda k: tag(r[k].get("machine"))
    if "roof" in r:
        roof = r["roof"]
        squares = [str(x.get("n") or x["product"].split(" ")[0]) for x in roof["sizes"] if x.get("kind", "square") == "square"]
        others = sum(x.get("kind", "square") != "square" for x in roof["sizes"])
        best = roof.get("roof_product") or f"n = {roof['roof_n']}"
        rows.append([f"float32 matmul roof (best of square n = {', '.join(squares)}"
                     + (f" and {others} products shaped like the model's" if others else "") + ")",
                     f"{roof['roof_gflops']:.0f} GFLOP/s ({best})", "", "", on("roof")])
    if "descent" in r:
        for d in r["descent"]["rows"]:
            tag_ = f"{d['preset']} (B = {d['batch']}, N = {d['N']})"
            cf = d["closed_form"]
            goal = d["preset"] == "full"
            rows.append([f"descent step, {tag_}: closed form",
                         f"{cf['step_s'] * 1e3:.2f} ms, {cf['gflops']:.0f} GFLOP/s = {d['roof_fraction']:.0%} of roof",
                         f">= {GOALS['roof_fraction']:.0%} of roof" if goal else "",
                         _yes(d["roof_fraction"] >= GOALS["roof_fraction"]) if goal else "", on("descent")])
            rows.append([f"descent step, {tag_}: autograd / closed form", f"{d['autograd_over_closed_form']:.2f}x time "
                         f"({d['autograd']['step_s'] * 1e3:.2f} ms)", "", "", on("descent")])
        if "roof" in r:
            k = kernels(r["descent"])
            name, g = max(k.items(), key=lambda x: x[1])
            roof_ = r["roof"]["roof_gflops"]
            md, mr = r["descent"].get("machine"), r["roof"].get("machine")
            rows.append([f"no measured kernel above the roof ({len(k)} descent kernels: steps and their parts)",
                         f"highest {name}: {g:.0f} GFLOP/s = {g / roof_:.0%} of roof", "<= roof",
                         _yes(g <= roof_), tag(md) if (md or {}).get("date") == (mr or {}).get("date") else tag(md, mr)])
    if "training" in r:
        t = r["training"]
        tag_ = f"{t['image_preset']}, B = {t['batch']}, N = {t['N_tokens']}, T = {t['T']}"
        rows.append([f"training step ({tag_}): naive / project time",
                     f"{t['speedup']:.2f}x ({t['naive']['step_s'] * 1e3:.0f} ms vs {t['project']['step_s'] * 1e3:.0f} ms)",
                     f">= {GOALS['train_speedup']}x", _yes(t["speedup"] >= GOALS["train_speedup"]), on("training")])
        rows.append([f"training step ({tag_}): naive / project temp memory",
                     f"{t['temp_memory_ratio']:.1f}x ({_mib(t['naive']['temp_bytes'])} vs {_mib(t['project']['temp_bytes'])})",
                     f">= {GOALS['train_memory']}x", _yes(t["temp_memory_ratio"] >= GOALS["train_memory"]), on("training")])
        if "autograd_remat" in t: rows.append([f"training step ({tag_}): the other two paths", "; ".join(
            f"{lab} {t[k]['step_s'] * 1e3:.0f} ms, temp {_mib(t[k]['temp_bytes'])}" for k, lab in
            (("closed_form_no_remat", "closed form without remat"), ("autograd_remat", "autograd with remat"))), "", "",
            on("training")])
        mt = t["memory_vs_T"]
        rows.append(["training temp memory vs T, project path: " + ", ".join(f"T = {m['T']}" for m in mt),
                     ", ".join(_mib(m["project_temp_bytes"]) for m in mt) + f" ({t['project_flatness']:.2f}x over the range)",
                     f"flat (<= {GOALS['flat_in_T']}x)", _yes(t["project_flatness"] <= GOALS["flat_in_T"]), on("training")])
        if "naive_growth" in t: rows.append(["training temp memory vs T, naive path (for contrast)",
                     ", ".join(_mib(m["naive_temp_bytes"]) for m in mt) + f" ({t['naive_growth']:.2f}x)", "", "", on("training")])
    if "training_profile" in r:
        p = r["training_profile"]
        tag_ = f"{p['preset']}, B = {p['batch']}, T = {p['T']}"
        sh = {k: v["share"] for k, v in p["parts"].items()}
        rows.append([f"training step profile ({tag_})",
                     f"{_ms(p['step_s'])} per step: descent forward {sh['descent_forward']:.0%}, backward "
                     f"{sh['backward']:.0%}, embed/decode/loss {sh['embed_decode_loss']:.0%}, optimizer {sh['optimizer']:.0%}",
                     "", "", on("training_profile")])
        ps = p["per_step"]
        rows.append([f"training step profile ({tag_}): one descent step's energy gradient, N = {p['N_tokens']}",
                     f"attention {ps['attention_grad']['share']:.0%}, Hopfield {ps['hopfield']['share']:.0%}, "
                     f"layer norm {ps['layer_norm']['share']:.0%} ({_ms(ps['attention_grad']['s'])}, "
                     f"{_ms(ps['hopfield']['s'])}, {_ms(ps['layer_norm']['s'])})", "", "", on("training_profile")])
    c = r.get("training_candidates")
    if c:
        by = {x["mode"]: x for x in c["rows"]}
        b = by[c["best_exact"]]
        n_exact = sum(x["cos_to_exact"] > 0.9999 for x in c["rows"])
        rows.append([f"training step, every exact-gradient candidate (B = {c['batch']}, T = {c['T']}; {c['source']}): "
                     "best / naive time",
                     f"{b['speedup']:.2f}x ({c['best_exact']}, temp memory {b['memory_ratio']:.1f}x less; "
                     f"best of {n_exact} exact candidates)",
                     f">= {GOALS['train_speedup']}x", _yes(b["speedup"] >= GOALS["train_speedup"]), on("training_candidates")])
        if c["best_approximate"]:
            a_ = by[c["best_approximate"]]
            rows.append([f"training step, approximate gradient ({c['best_approximate']}): time / naive",
                         f"{a_['speedup']:.2f}x, cosine {a_['cos_to_exact']:.3f} to the exact gradient", "", "",
                         on("training_candidates")])
    if "attention" in r:
        last = r["attention"]["rows"][-1]["N"]
        for a in r["attention"]["rows"]:
            goal = a["N"] == last
            rows.append([f"descent step softmax vs taylor, N = {a['N']} (D = {a['D']}, H = {a['H']}, Y = {a['Y']}, B = 1)",
                         f"{a['softmax']['step_s'] * 1e3:.2f} ms vs {a['taylor']['step_s'] * 1e3:.2f} ms: "
                         f"{a['taylor_speedup']:.2f}x",
                         f">= {GOALS['taylor_speedup']}x" if goal else "",
                         _yes(a["taylor_speedup"] >= GOALS["taylor_speedup"]) if goal else "", on("attention")])
    if "context" in r:
        c = r["context"]
        for x in c["rows"]:
            goal = x is c["rows"][-1]
            sm, ta = x["softmax"], x["taylor"]
            rows.append([f"causal ET training step, softmax vs taylor, N = {x['N']} ({x['batch']} x {x['N']} characters)",
                         f"{_ms(sm['step_s'])} vs {_ms(ta['step_s'])}: {x['taylor_step_speedup']:.2f}x; peak "
                         f"{_mib(sm['peak_bytes'])} vs {_mib(ta['peak_bytes'])}",
                         f">= {GOALS['context_step_speedup']}x" if goal else "",
                         _yes(x["taylor_step_speedup"] >= GOALS["context_step_speedup"]) if goal else "", on("context")])
            rows.append([f"causal ET cached generation at the end of context N = {x['N']}, softmax vs taylor",
                         f"{sm['generation_chars_per_s']:.0f} vs {ta['generation_chars_per_s']:.0f} chars/s", "", "",
                         on("context")])
        sl = c["generation_slowdown"]
        first, last = c["rows"][0]["N"], c["rows"][-1]["N"]
        rows.append([f"cached generation speed at N = {first} / at N = {last} (taylor; softmax)",
                     f"{sl['taylor']:.2f}x; {sl['softmax']:.2f}x", f"taylor <= {GOALS['context_generation_flat']}x",
                     _yes(sl["taylor"] <= GOALS["context_generation_flat"]), on("context")])
    if "dense" in r:
        d = r["dense"]
        rows.append([f"dense exponential recall, {d['B']} queries x {d['K']} patterns x {d['D']} bits, "
                     f"{d['sweeps']} async sweeps",
                     f"{_ms(d['time_s'])}, peak {_mib(d['peak_bytes'])} (temp {_mib(d['temp_bytes'])}), "
                     f"exact recall {d['exact_recall']:.0%}", "", "", on("dense")])
    if "quality" in r:
        for q in r["quality"]["rows"]:
            rows.append([f"inpainting {q['checkpoint']} ({q.get('model') or 'model'}): masked MSE at {q['mask_ratio']:.0%} "
                         f"masking ({q['n_images']} test images)",
                         f"model {q['model_mse']:.4f} ({q['model_psnr']:.1f} dB); biharmonic {q['biharmonic_mse']:.4f}; "
                         f"mean fill {q['mean_fill_mse']:.4f}", "", "",
                         on("quality") if q["source"].startswith("recomputed")
                         else "not timed: the training log's final evaluation"])
        if not r["quality"]["rows"]:
            rows.append(["inpainting masked MSE at 50% masking", "no shipped checkpoint logs found", "", "", on("quality")])
    g = r.get("generation")
    if g: rows.append([f"generation, {g['model']}: {g['new_chars']} characters up to context {g['context']}, cached / recomputed",
                       f"{g['speedup']:.1f}x ({g['cached_chars_per_s']:.0f} vs {g['recompute_chars_per_s']:.0f} chars/s)",
                       f">= {GOALS['generation_speedup']:.0f}x", _yes(g["speedup"] >= GOALS["generation_speedup"]),
                       on("generation")])
    if g and g.get("masked"):
        m = g["masked"]
        rows.append([f"generation, {m['model']}: {m['new_chars']} new characters by unmasking, {m['rounds']} rounds per "
                     f"{m['context'] // 2}", f"{m['chars_per_s']:.0f} chars/s", "", "", on("generation")])
    for task, q in r.get("time_to_quality", {}).items():
        for e in ttq_summary(q):
            if e["best"] is None: continue
            per = "one core" if e["cores_used"] == [1] else "/".join(map(str, e["cores_used"])) + " cores"
            b, tf = e["best"], e["transformer"]
            value = (f"ET {b['method']} {_value(q['metric'], b['valid'])}"
                     + (f" (best of {e['n_et']} ET methods)" if e["n_et"] > 1 else "")
                     + (f" vs {tf['method']} {_value(q['metric'], tf['valid'])} ({e['compare']})" if tf
                        else "; no matched transformer at this budget"))
            rows.append([f"time to quality, {task}, {METRIC.get(q['metric'], q['metric'])} after {e['seconds']:.0f} CPU s "
                         f"each ({per} per run)", value, "", "", tag(*e["machines"])])
    tm = r.get("training_methods")
    if tm:
        for x in tm["rows"]:
            rates = " / ".join(f"{v:.3g}" for v in x.get("steps_per_cpu_s") or [])
            cos = "".join(f"; gradient cosine to the exact one {c_['initial']:.2f} at the start, {c_['trained']:.2f} trained"
                          for c_ in (x.get("grad_cosine") or {}).values())
            rows.append([f"training method, image, {tm['seconds']:.0f} CPU s: {x['method']}"
                         + (" (best ET)" if x["method"] == tm["best"] else ""),
                         f"{METRIC.get(tm['metric'], tm['metric'])} {_value(tm['metric'], x['valid'])} (test "
                         f"{_value(tm['metric'], x['test'])}), {x['steps']} steps at {rates} steps per CPU s{cos}",
                         "", "", tag(x["machine"])])
    return rows


def kernels(descent: dict) -> dict[str, float]:
    "GFLOP/s of every kernel the descent section measured: each preset's closed-form and autograd step, and the parts."
    k = {}
    for d in descent["rows"]:
        for kind in ("closed_form", "autograd"): k[f"{d['preset']} {kind.replace('_', ' ')} step"] = d[kind]["gflops"]
    b = descent.get("breakdown", {})
    for name, v in b.items():
        if isinstance(v, dict) and "gflops" in v: k[f"{b['preset']} {name.replace('_', ' ')}"] = v["gflops"]
    return k


def markdown(r: dict) -> str:
    m = r["machine"]
    head = (f"Written {m['date']} with jax {m['jax']} ({m['platform']}){' on quick settings' if r['quick'] else ''}. "
            "Each row names the machine it was measured on, with the load average at the start and the end of its "
            "section; timings are medians of several repeats after a warm-up (the roof: the best repeat), and a ratio "
            "compares two figures measured side by side.\n\n")
    return head + table_markdown(r) + "\n"


def table_markdown(r: dict) -> str:
    "The Markdown table of the measures (bench.md's and the site's benchmarks page's)."
    lines = ["| measure | value | goal | met? | measured on |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in table(r)]
    return "\n".join(lines)
