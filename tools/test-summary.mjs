// Prints jest JSON reports (one per Nx project) as one plain "N passed, N failed" line, and fails
// on a failed test, a failed run or no tests run at all.
import { readFileSync } from 'node:fs';

const [label, ...files] = process.argv.slice(2);
const reports = files.map((file) => JSON.parse(readFileSync(file, 'utf8')));
const sum = (key) => reports.reduce((total, report) => total + report[key], 0);
console.log(`${label}: ${sum('numPassedTests')} passed, ${sum('numFailedTests')} failed (${files.length} reports)`);
if (sum('numTotalTests') === 0 || sum('numFailedTests') > 0 || reports.some((report) => !report.success))
  process.exit(1);
