// A Node.js program that spends about argv[2] seconds in JavaScript:
// outer -> middle -> inner, inner a hot loop (compiled by V8's tiers as it
// runs). Prints its pid and a checksum at the end.
const seconds = Number(process.argv[2] || 1);
function inner(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * i) % 1000003; return s; }
function middle(n) { return inner(n) + 1; }
function outer(n) { return middle(n) + 2; }
const end = Date.now() + seconds * 1000;
let total = 0;
while (Date.now() < end) total += outer(20000);
console.log(process.pid + " " + (total > 0));
