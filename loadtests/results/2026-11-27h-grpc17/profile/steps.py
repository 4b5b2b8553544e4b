import json,sys,collections,re
import glob
from srcmap import srcof
# usage: steps.py grpcProfile grpcReqPerS httpProfile httpReqPerS windowS
STEPS=[
 ('front: request HEADERS read, HPACK decode, stream opened / request head read', r'^onHeaders connection\.ts', r'^readRequestHead '),
 ('request decode (protobuf + forwardable check / binary extension)', r'^(decodeModelInferRequest|inferRequestFromProto|checkForwardableFraming) ', r'^decodeInferRequestBody '),
 ('authentication', r'^authenticate ', r'^authenticate '),
 ('rate limit (+ lease renewal)', r'^applyRateLimit ', r'^applyRateLimit '),
 ('node request encode (forwarded protobuf / JSON render)', r'^encodeForwardedInferRequestFramed ', r'^renderInferRequest '),
 ('node request header block (grpc-timeout)', r'^requestBlock ', r'^$^'),
 ('upstream call start: stream / exchange object, deadline, listeners', r'^(h2Call|start) h2-call\.ts', r'^(exchange|Exchange) raw-infer-exchange\.ts'),
 ('node request write (client uncork / socket pool write)', r'^uncork client-connection\.ts', r'^\(anon\) raw-socket-pool\.ts'),
 ('answer read: frames, HPACK, trailers / raw HTTP reader', r'^read client-connection\.ts', r'^onData raw-infer-exchange\.ts'),
 ('answer decode (node answer to tensors, checks)', r'^decodeNodeAnswer ', r'^decodeNodeAnswer '),
 ('client answer: reply, trailers / answer render', r'^(reply|sendTrailers) h2-unary-call\.ts', r'^answer connection\.ts'),
 ('end-of-turn flush to the client socket', r'^flush connection\.ts', r'^flush end-of-turn-writer\.ts'),
 ('metrics + access log (finishRequest)', r'^finishRequest ', r'^finishRequest '),
 ('GC', r'^\(garbage collector\)', r'^\(garbage collector\)'),
 ('writev + writeBuffer (self: the syscalls)', r'^(writev|writeBuffer) ', r'^(writev|writeBuffer) '),
]
def load(f,rate,W):
    p=json.load(open(f))
    nodes={x['id']:x for x in p['nodes']}; parent={}
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
    t0=next(tt for s,tt in zip(p['samples'],ts) if any(n.startswith('admit ') for n in stack(s)))
    lo=t0+2e6; hi=lo+W*1e6; n=rate*W
    dt=collections.Counter()
    for s,tt,d in zip(p['samples'],ts,p['timeDeltas']):
        if lo<=tt<hi: dt[s]+=d
    return dt,names,stack,n
def step(prof,pat):
    dt,names,stack,n=prof
    tot=0
    for i,v in dt.items():
        if any(re.search(pat,nm) for nm in stack(i)): tot+=v
    return tot/n
def total(prof):
    dt,names,stack,n=prof
    return sum(v for i,v in dt.items() if not names[i].startswith('(idle)'))/n
W=float(sys.argv[5])
g=load(glob.glob(sys.argv[1])[0],float(sys.argv[2]),W); h=load(glob.glob(sys.argv[3])[0],float(sys.argv[4]),W)
print('| step | gRPC miss µs | HTTP miss µs | gRPC - HTTP |'); print('| --- | --- | --- | --- |')
print(f'| main thread outside idle | {total(g):.0f} | {total(h):.0f} | {total(g)-total(h):+.0f} |')
for label,gp,hp in STEPS:
    a=step(g,gp); b=step(h,hp); print(f'| {label} | {a:.1f} | {b:.1f} | {a-b:+.1f} |')
