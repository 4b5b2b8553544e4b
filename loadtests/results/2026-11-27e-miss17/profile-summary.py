import json,sys,collections,re
# usage: prof2.py file rate windowS [pattern]
p=json.load(open(sys.argv[1])); rate=float(sys.argv[2]); W=float(sys.argv[3]); pat=sys.argv[4] if len(sys.argv)>4 else '.'
nodes={x['id']:x for x in p['nodes']}
parent={}
for x in p['nodes']:
    for c in x.get('children',[]): parent[c]=x['id']
def name(x):
    cf=x['callFrame']; u=cf['url'].split('/')[-1]; return f"{cf['functionName'] or '(anon)'} {u}:{cf['lineNumber']}"
names={i:name(x) for i,x in nodes.items()}
def stack(i):
    out=[]
    while i is not None: out.append(names[i]); i=parent.get(i)
    return out
t=p['startTime']; ts=[]
for d in p['timeDeltas']: t+=d; ts.append(t)
t0=None
for s,tt in zip(p['samples'],ts):
    if any('renderInferRequest' in n for n in stack(s)): t0=tt; break
lo=t0+1.5e6; hi=lo+W*1e6; n=rate*W
dt=collections.Counter()
prev=None
for s,tt,d in zip(p['samples'],ts,p['timeDeltas']):
    if lo<=tt<hi: dt[s]+=d
tot=sum(v for i,v in dt.items() if names[i]!='(idle) :-1')
print(f'window {W}s, requests ~{n:.0f}, non-idle us/req {tot/n:.1f}, idle us/req {dt.get(next(i for i in names if names[i]=="(idle) :-1"),0)/n:.0f}')
self_=collections.Counter(); incl=collections.Counter()
for i,v in dt.items():
    self_[names[i]]+=v
    seen=set()
    for nm in stack(i):
        if nm not in seen: incl[nm]+=v; seen.add(nm)
for k,v in self_.most_common(40):
    print(f"{v/n:8.1f} {k}")
print('--- inclusive')
for k,v in incl.most_common(400):
    if re.search(pat,k) and v/n>=2: print(f"{v/n:8.1f} {k}")
