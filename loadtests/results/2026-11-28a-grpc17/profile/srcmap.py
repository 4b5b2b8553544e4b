import bisect,functools
@functools.lru_cache(None)
def _marks(path):
    starts=[];names=[]
    try:
        with open(path) as f:
            for i,line in enumerate(f):
                if line.startswith('// ') and ('/src/' in line or line.startswith('// node_modules')) and line.rstrip().endswith(('.ts','.js','.mjs')):
                    starts.append(i); names.append(line[3:].strip().split('/')[-1])
    except OSError: pass
    return starts,names
def srcof(url,line):
    if not url.startswith('file://'): return url.split('/')[-1]+':'+str(line)
    starts,names=_marks(url[7:])
    k=bisect.bisect_right(starts,line)-1
    return names[k] if k>=0 else url.split('/')[-1]
