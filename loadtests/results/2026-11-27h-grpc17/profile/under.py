import json,sys,collections,re
import glob
from srcmap import srcof
# usage: under.py profile reqPerS windowS ancestorRegex : self time of functions under the ancestor, µs/req
p=json.load(open(glob.glob(sys.argv[1])[0])); rate=float(sys.argv[2]); W=float(sys.argv[3]); anc=sys.argv[4]
nodes={x['id']:x for x in p['nodes']}; parent={}
for x in p['nodes']:
    for c in x.get('children',[]): parent[c]=x['id']
def name(x):
    cf=x['callFrame']; return f"{cf['functionName'] or '(anon)'} {srcof(cf['url'], cf['lineNumber'])}"
names={i:name(x) for i,x in nodes.items()}
def stack(i):
    out=[]; j=i
    while j is not None: out.append(names[j]); j=parent.get(j)
    return out
t=p['startTime']; ts=[]
for d in p['timeDeltas']: t+=d; ts.append(t)
t0=next(tt for s,tt in zip(p['samples'],ts) if any(n.startswith('admit ') for n in stack(s)))
lo=t0+2e6; hi=lo+W*1e6; n=rate*W
selfc=collections.Counter(); inc=collections.Counter()
for s,tt,d in zip(p['samples'],ts,p['timeDeltas']):
    if lo<=tt<hi:
        st=stack(s)
        idx=[k for k,nm in enumerate(st) if re.search(anc,nm)]
        if not idx: continue
        selfc[st[0]]+=d
        for nm in set(st[:max(idx)]): inc[nm]+=d
for k,v in inc.most_common(25): print(f'{v/n:7.1f} incl {k}')
print('-- self')
for k,v in selfc.most_common(15): print(f'{v/n:7.1f} {k}')
