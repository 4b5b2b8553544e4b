const {marks}=require(require('path').resolve(process.argv[2]));
const q=(a,p)=>a[Math.min(a.length-1,(a.length*p)|0)].toFixed(0);
const d=marks.filter(m=>m[15]).map(m=>(m[15]-m[1])/1000).sort((a,b)=>a-b); const e=marks.map(m=>(m[1]-m[0])/1000).sort((a,b)=>a-b);
console.log('n',d.length,'stream opened -> first immediate after it (µs) p10/p50/p90',q(d,.1),q(d,.5),q(d,.9),'; request -> opened p50',q(e,.5));
const c=marks.filter(m=>m[16]!==undefined).map(m=>m[16]).sort((a,b)=>a-b); if(c.length) console.log('gateway CPU in it p10/p50/p90',q(c,.1),q(c,.5),q(c,.9));
