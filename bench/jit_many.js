// bench/jit_perf_map.sh: FUNCTIONS (argv[2]) small functions made and called once, then a
// thread blocked under a chain of JavaScript calls (prints "ready PID TOTAL").
const n = Number(process.argv[2] || 100000);
let total = 0;
for (let i = 0; i < n; i++) total += new Function("x", "return x + " + i)(i);
const cell = new Int32Array(new SharedArrayBuffer(4));
function leaf_wait() { console.log("ready " + process.pid + " " + total); Atomics.wait(cell, 0, 0); }
function third(n) { if (n > 0) return third(n - 1) + 1; leaf_wait(); return 0; }
third(3);
