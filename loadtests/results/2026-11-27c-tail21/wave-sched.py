#!/usr/bin/env python3
"""Joins llm-wave-ttft.ts's slow probes with the scheduler's timeline (issue 21, tail21).

  python3 wave-sched.py DIR WINDOW [SLOW_SHARE]

DIR holds WINDOW.data (perf record of sched_switch/wakeup, CLOCK_MONOTONIC) and WINDOW.probes.json (each probe's
send, first token sampled by the engine, first read by the client, same clock). For each probe inside the
recording, the *delivery* span (first token sampled -> client's read) is split by what three threads did:
the node's main thread, its engine thread (the node thread other than main with the most run time) and the
client's main thread: running, runnable (and who held its CPU meanwhile), sleeping. The slowest SLOW_SHARE
(default 0.05) of the probes by TTFT are listed with their category, and the categories counted.
"""
import json, re, subprocess, sys
from collections import defaultdict

SWITCH = re.compile(r'prev_comm=(.*?) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)')
WAKE = re.compile(r'comm=(.*?) pid=(\d+) prio=\d+(?: success=\d+)? target_cpu=(\d+)')


def load(data):
    out = subprocess.run(['perf', 'script', '-i', data, '-F', 'pid,tid,cpu,time,event,trace'], capture_output=True, text=True).stdout
    events = []
    for line in out.splitlines():
        m = re.match(r'\s*(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)', line)
        if m:
            events.append((float(m.group(4)) * 1000, int(m.group(3)), int(m.group(1)), int(m.group(2)), m.group(5), m.group(6)))
    return events


def timelines(events):
    """Per tid: list of (from_ms, state, cpu); per cpu: list of (from_ms, tid). tid -> pid, tid -> comm."""
    state = defaultdict(list)
    oncpu = defaultdict(list)
    pid_of, comm_of, run_ms = {}, {}, defaultdict(float)
    last_in = {}
    for t, cpu, pid, tid, ev, trace in events:
        pid_of.setdefault(tid, pid)
        if ev == 'sched:sched_switch':
            m = SWITCH.search(trace)
            if not m:
                continue
            prev, pstate, nxt = int(m.group(2)), m.group(3), int(m.group(5))
            comm_of[prev] = m.group(1)
            comm_of[nxt] = m.group(4)
            state[prev].append((t, 'runnable' if pstate.startswith('R') else 'sleep', cpu))
            state[nxt].append((t, 'run', cpu))
            oncpu[cpu].append((t, nxt))
            if prev in last_in:
                run_ms[prev] += t - last_in.pop(prev)
            last_in[nxt] = t
        elif ev == 'sched:sched_waking':  # fired in the waker's context, so tid is the waker
            m = WAKE.search(trace)
            if m:
                woken = int(m.group(2))
                comm_of[woken] = m.group(1)
                state[woken].append((t, 'runnable', int(m.group(3)), tid))
    return state, oncpu, pid_of, comm_of, run_ms


def at(series, t):
    """The entry of a time-sorted series in force at t."""
    lo, hi, best = 0, len(series) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        if series[mid][0] <= t:
            best, lo = series[mid], mid + 1
        else:
            hi = mid - 1
    return best


def split(series, oncpu, a, b, label):
    """ms per state of one thread in [a, b]; runnable split by the label of the tid holding its cpu."""
    out = defaultdict(float)
    points = [e for e in series if a < e[0] < b]
    cur = at(series, a)
    cuts = [(a, cur)] + [(e[0], e) for e in points] + [(b, None)]
    for (t0, e), (t1, _) in zip(cuts, cuts[1:]):
        if e is None:
            out['unknown'] += t1 - t0
            continue
        st, cpu = e[1], e[2]
        if st != 'runnable':
            out[st] += t1 - t0
            continue
        # Who held the cpu while this thread waited: step through that cpu's switches.
        cs = oncpu[cpu]
        holder = at(cs, t0)
        marks = [(t0, holder[1] if holder else -1)] + [(c[0], c[1]) for c in cs if t0 < c[0] < t1] + [(t1, None)]
        for (u0, h), (u1, _) in zip(marks, marks[1:]):
            out['runnable behind ' + label(h)] += u1 - u0
    return out


def main():
    folder, window = sys.argv[1], sys.argv[2]
    share = float(sys.argv[3]) if len(sys.argv) > 3 else 0.05
    meta = json.load(open(f'{folder}/{window}.probes.json'))
    events = load(f'{folder}/{window}.data')
    if not events:
        sys.exit('no events')
    t_lo, t_hi = events[0][0], events[-1][0]
    state, oncpu, pid_of, comm_of, run_ms = timelines(events)
    node, client = meta['nodePid'], meta['clientPid']
    node_threads = [t for t, p in pid_of.items() if p == node and t != node]
    engine = max(node_threads, key=lambda t: run_ms.get(t, 0)) if node_threads else -1

    def label(tid):
        if tid == node: return 'node main'
        if tid == engine: return 'node engine'
        if pid_of.get(tid) == node: return 'node other'
        if tid == client: return 'client main'
        if pid_of.get(tid) == client: return 'client other'
        if tid == 0: return 'idle'
        return 'other process'

    probes = [p for p in meta['probes'] if p['startMs'] > t_lo and p['readMs'] < t_hi]
    probes.sort(key=lambda p: p['readMs'] - p['startMs'], reverse=True)
    slow = probes[:max(1, round(len(probes) * share))]
    totals = defaultdict(lambda: defaultdict(float))
    cats = defaultdict(int)
    rows = []
    for p in probes:
        a, b = p['firstTokenMs'], p['readMs']
        at_ft = at(state[node], a) or (0, '?', 0)
        # The main thread takes the engine's message on its first run from the first token on (at once if running).
        pickup = a if at_ft[1] == 'run' else next((e[0] for e in state[node] if a <= e[0] <= b and e[1] == 'run'), b)
        # The SSE write: the client's last wake-up by the main thread before its read, else the end of that run.
        wakes = [e for e in state[client] if len(e) > 3 and pickup <= e[0] <= b and e[3] == node]
        run_end = next((e[0] for e in state[node] if pickup < e[0] <= b and e[1] != 'run'), b)
        write = wakes[-1][0] if wakes else min(run_end, b)
        before = split(state[node], oncpu, a, pickup, label)
        work = split(state[node], oncpu, pickup, write, label)
        after = split(state[client], oncpu, write, b, label)
        behind = lambda d, who: sum(v for k, v in d.items() if k.startswith('runnable') and (who in k))
        parts = {
            'main waits for the core behind the engine': behind(before, 'node engine') + behind(work, 'node engine'),
            'main waits for the core behind other processes': behind(before, 'other') + behind(work, 'other') + behind(before, 'client') + behind(work, 'client') + behind(before, 'idle') + behind(work, 'idle'),
            'main asleep before taking the message': before.get('sleep', 0),
            'main running before the write': before.get('run', 0) + work.get('run', 0),
            'main asleep between taking and writing': work.get('sleep', 0),
            'client after the write': sum(after.values()),
        }
        if p in slow:
            cat = max(parts, key=parts.get)
            cats[cat] += 1
            for k, v in parts.items():
                totals['slow'][k] += v
            rows.append({'ttftMs': round(b - p['startMs'], 2), 'toEngineMs': round(p['sentMs'] - p['startMs'], 2), 'engineMs': round(a - p['sentMs'], 2), 'deliveryMs': round(b - a, 2),
                         'mainAtFirstToken': at_ft[1], 'pickupMs': round(pickup - a, 2), 'writeMs': round(write - a, 2), 'wokeClient': bool(wakes),
                         'parts': {k: round(v, 2) for k, v in parts.items() if v > 0.005}, 'client': {k: round(v, 2) for k, v in after.items()}, 'category': cat})
        for k, v in parts.items():
            totals['all'][k] += v
    # Every wake-up of the main thread by the engine thread (a message posted): the delay until the main thread ran,
    # and the part of it spent behind the engine thread on the main thread's cpu.
    delays, behind_engine = [], []
    for e in state[node]:
        if len(e) > 3 and e[3] == engine:
            run = next((x[0] for x in state[node] if x[0] >= e[0] and x[1] == 'run'), None)
            if run is None or run - e[0] > 1000:
                continue
            d = split(state[node], oncpu, e[0], run, label)
            delays.append(run - e[0])
            behind_engine.append(d.get('runnable behind node engine', 0))
    delays_sorted = sorted(delays)
    wake = {'engineWakesMain': len(delays), 'meanDelayMs': round(sum(delays) / max(1, len(delays)), 3),
            'p90DelayMs': round(delays_sorted[int(0.9 * len(delays_sorted))], 3) if delays else None, 'maxDelayMs': round(max(delays), 3) if delays else None,
            'meanBehindEngineMs': round(sum(behind_engine) / max(1, len(behind_engine)), 3), 'over1msBehindEngine': sum(1 for b in behind_engine if b > 1)}
    print(json.dumps({'window': window, 'mainWokenByEngine': wake, 'probesInRecording': len(probes), 'slow': len(slow), 'engineTid': engine, 'categories': cats,
                      'slowMeanMs': {k: round(v / len(slow), 2) for k, v in totals['slow'].items()}, 'allMeanMs': {k: round(v / max(1, len(probes)), 2) for k, v in totals['all'].items()}, 'slowProbes': rows}, indent=1))


main()
