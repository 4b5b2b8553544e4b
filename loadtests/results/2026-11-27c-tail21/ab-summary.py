#!/usr/bin/env python3
"""Summarizes wave-ab.sh's runs: per side and round, each window's probes, TTFT p50/p99, the waves/idle ratios,
and wave-sched.py's categories of the slowest 5% in each recorded window.  python3 ab-summary.py OUTDIR"""
import json, os, subprocess, sys
from collections import defaultdict

out = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
rows = []
cats = defaultdict(lambda: defaultdict(int))
means = defaultdict(lambda: defaultdict(list))
for run in sorted(os.listdir(out)):
    path = os.path.join(out, run, 'wave.json')
    if not os.path.exists(path):
        continue
    side, rnd = run.split('-')
    d = json.load(open(path))
    line = {'side': side, 'round': rnd}
    for w in ['idle', 'waves', 'staggered', 'idle2']:
        a = d[w]['all']
        line[w] = f"{a['probes']} probes, p50 {a['ttftP50']:.1f}, p99 {a['ttftP99']:.1f}, slow5% delivery {a['slowestTwentiethMeanMs']['deliveryMs']:.1f}"
        if os.path.exists(os.path.join(out, run, f'{w}.data')):
            s = json.loads(subprocess.run(['python3', os.path.join(here, 'wave-sched.py'), os.path.join(out, run), w, '0.05'], capture_output=True, text=True).stdout)
            line[w + 'Wake'] = s['mainWokenByEngine']
            for k, v in s['categories'].items():
                cats[(side, w)][k] += v
            for k, v in s['allMeanMs'].items():
                means[(side, w)][k].append(v)
    line['ratios'] = {k: round(v, 2) for k, v in d['ratios'].items()}
    rows.append(line)
for r in rows:
    print(json.dumps(r))
print('slowest 5% per recorded window, categories summed over rounds:')
for key in sorted(cats):
    print(' ', key, dict(cats[key]))
print('all probes in the recordings, mean ms per part (mean over rounds):')
for key in sorted(means):
    print(' ', key, {k: round(sum(v) / len(v), 2) for k, v in means[key].items()})
