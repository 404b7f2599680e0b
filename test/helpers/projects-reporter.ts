// Closes the run with the vitest projects that ran and those skipped for lack of a
// service (test/helpers/projects.ts); under CI=true a skipped project fails the run.
import type { Reporter, TestModule } from 'vitest/node';
import { detectServices, planProjects, projectsSummary } from './projects.js';

export default class ProjectsReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const names = new Set(testModules.map((module) => module.project.name));
    const plans = planProjects(detectServices());
    const ran = plans.filter((plan) => names.has(plan.name)).map((plan) => plan.name);
    const { lines, failed } = projectsSummary(plans, ran, process.env.CI === 'true');
    process.stdout.write(`\n${lines.join('\n')}\n`);
    if (failed) process.exitCode = 1;
  }
}
