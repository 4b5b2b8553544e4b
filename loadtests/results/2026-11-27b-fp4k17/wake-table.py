# The counts of the two 300/s wake accounts side by side (wake-table.txt): python3 wake-table.py > wake-table.txt
import json
print("Per miss, gateway main thread. Syscalls from the strace'd window; wake-ups (times on the CPU) from the untraced window.")
print("| build | miss | load | epoll_pwait | read | writev | write | main-thread wake-ups | traced misses |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for b in ['base', 'branch']:
    j = json.load(open(f'wake-{b}-300/gateway-wake-account.json'))
    for a in j['accounts']:
        m = a['syscallsPerRequest']['main']
        pr = a['perRequest']['main']
        print(f"| {b} | {a['server'].replace('gateway miss ', '')} | {a['load']} | {m.get('epoll_pwait', 0):.2f} | {m.get('read', 0):.2f} | {m.get('writev', 0):.2f} | {m.get('write', 0):.2f} | {pr['slices']:.2f} | {a['tracedRequests']} |")
