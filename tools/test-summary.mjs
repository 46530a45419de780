// Prints a jest JSON report as one plain "N passed, N failed" line, and fails on no tests run.
import { readFileSync } from 'node:fs';

const [label, file] = process.argv.slice(2);
const report = JSON.parse(readFileSync(file, 'utf8'));
console.log(`${label}: ${report.numPassedTests} passed, ${report.numFailedTests} failed`);
if (report.numTotalTests === 0 || report.numFailedTests > 0 || !report.success) process.exit(1);
