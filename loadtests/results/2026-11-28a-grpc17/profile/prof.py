import json,sys,collections,re
from srcmap import srcof
# usage: prof.py file reqPerS windowS [pattern] ; window = last (windowS+1) s before the last sample, minus 1 s
p=json.load(open(sys.argv[1])); rate=float(sys.argv[2]); W=float(sys.argv[3]); pat=sys.argv[4] if len(sys.argv)>4 else '.'
nodes={x['id']:x for x in p['nodes']}
parent={}
for x in p['nodes']:
    for c in x.get('children',[]): parent[c]=x['id']
def name(x):
    cf=x['callFrame']; return f"{cf['functionName'] or '(anon)'} {srcof(cf['url'], cf['lineNumber'])}"
names={i:name(x) for i,x in nodes.items()}
memo={}
def stack(i):
    if i in memo: return memo[i]
    out=[]; j=i
    while j is not None: out.append(names[j]); j=parent.get(j)
    memo[i]=out; return out
t=p['startTime']; ts=[]
for d in p['timeDeltas']: t+=d; ts.append(t)
# window: first sample whose stack has the marker + 2 s, length W
marker=sys.argv[5] if len(sys.argv)>5 else 'frame'
t0=None
for s,tt in zip(p['samples'],ts):
    if any(re.search(marker,n) for n in stack(s)): t0=tt; break
lo=t0+2e6; hi=lo+W*1e6; n=rate*W
dt=collections.Counter()
for s,tt,d in zip(p['samples'],ts,p['timeDeltas']):
    if lo<=tt<hi: dt[s]+=d
idle=[i for i in names if names[i].startswith('(idle)')]
tot=sum(v for i,v in dt.items() if not names[i].startswith('(idle)'))
print(f'window {W}s, requests ~{n:.0f}, non-idle us/req {tot/n:.1f}')
self_=collections.Counter(); incl=collections.Counter()
for i,v in dt.items():
    if names[i].startswith('(idle)'): continue
    self_[names[i]]+=v
    seen=set()
    for nm in stack(i):
        if nm not in seen: incl[nm]+=v; seen.add(nm)
for k,v in self_.most_common(45):
    print(f"{v/n:8.1f} {k}")
print('--- inclusive')
for k,v in incl.most_common(600):
    if re.search(pat,k) and v/n>=1.5: print(f"{v/n:8.1f} {k}")
