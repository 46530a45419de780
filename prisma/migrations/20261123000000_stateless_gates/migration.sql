-- Gates are signed offers, not rows (DESIGN.md, "Gates are signed offers"): nothing is written per
-- 402. Payments keep everything their history shows (gate_id, now the gate's ref; site, path,
-- amount, payer, transaction), so no payment row changes. Gate counts stay in site_daily_counts.

-- DropForeignKey
ALTER TABLE "gates" DROP CONSTRAINT "gates_site_id_fkey";

-- DropTable
DROP TABLE "gates";

-- DropEnum
DROP TYPE "GateStatus";
