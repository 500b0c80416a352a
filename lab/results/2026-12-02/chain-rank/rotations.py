import json
import sys

t = json.load(open(sys.argv[1]))
sets = ["hotpotqa", "2wikimultihopqa", "musique"]
base = t[0]


def cost(r):
    w = r["w"]
    return (
        w.get("hop", 0) > 0 or w.get("pick") == "hop",
        w.get("anchors", 1),
        w.get("n", 16),
        w.get("title", 0) + w.get("entity", 0) + w.get("hop", 0),
    )


def fam(r):
    return "reserve" if r["w"] and r["w"].get("kind") == "reserve" else "additive"


out = []
for family in ("additive", "reserve", "both"):
    rows = [r for r in t[1:] if family == "both" or fam(r) == family]
    for check in sets:
        fit = [s for s in sets if s != check]
        # ties go to the shipped rerank (the cheapest), then to the grid's order (cheaper first)
        best = max(
            rows + [base],
            key=lambda r, fit=fit: (round(sum(r[s][0] for s in fit), 6), r is base),
        )
        line = {
            "family": family,
            "fit": fit,
            "check": check,
            "chosen": best["w"],
            "fit_mean": round(sum(best[s][0] for s in fit) / 2, 4),
            "check_pr": best[check][0],
            "check_all": best[check][1],
            "shipped_check_pr": base[check][0],
            "shipped_check_all": base[check][1],
        }
        line["wins"] = (
            best is not base
            and best[check][0] > base[check][0]
            and best[check][1] >= base[check][1]
        )
        out.append(line)
        print(json.dumps(line))
    pooled = max(rows + [base], key=lambda r: (round(sum(r[s][0] for s in sets), 6), r is base))
    print(
        json.dumps({"family": family, "pooled_choice": pooled["w"], **{s: pooled[s] for s in sets}})
    )
