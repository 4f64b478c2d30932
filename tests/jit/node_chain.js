// A Node.js program blocked under a known chain of JavaScript calls:
// first -> second -> third (x4, recursive) -> leaf_wait -> Atomics.wait.
// Prints "ready PID" when it is about to block.
const cell = new Int32Array(new SharedArrayBuffer(4));
function leaf_wait() { console.log("ready " + process.pid); Atomics.wait(cell, 0, 0); }
function third(n) { if (n > 0) return third(n - 1) + 1; leaf_wait(); return 0; }
function second() { return third(3) + 2; }
function first() { return second() * 3; }
first();
