/**
 * The default prompt templates of each tool profile (policy-loop.md §3, §4), used when an episode's policy gives
 * none of its own. They are part of the contract: an episode is validated against the placeholders they use.
 */
import type { ToolProfileName } from './policy.js';

/** mini-swe-agent's submission sentinel: the first line of the output, with exit code 0. */
export const MINI_SUBMIT_SENTINEL = 'COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT';

const SWEAGENT_SYSTEM =
  'You are an autonomous software engineer working in a terminal on a code repository. You act only through the tools you are given.';

const SWEAGENT_INSTANCE = `<uploaded_files>
{{working_dir}}
</uploaded_files>
A code repository has been uploaded to the directory {{working_dir}}. Consider the following PR description:

<pr_description>
{{problem_statement}}
</pr_description>

Make the minimal changes to non-test files in {{working_dir}} so that the requirements in the <pr_description> are met.
The test files have already been taken care of: do not modify any tests.
A good way to work:
1. Find and read the code relevant to the <pr_description>.
2. Write a small script that reproduces the problem and run it with the bash tool.
3. Edit the source code to fix the problem.
4. Run the script again to confirm the fix.
5. Think about edge cases and make sure the fix covers them.
Call exactly one tool per reply. When you are done, call submit.`;

const MINI_SYSTEM = 'You are a helpful assistant that solves programming tasks by running bash commands.';

const MINI_INSTANCE = `Resolve the following issue in the repository at {{working_dir}}.

<pr_description>
{{problem_statement}}
</pr_description>

Every reply must call the bash tool. Each command runs in a fresh shell whose working directory is {{working_dir}}:
cd and export do not carry over between commands. Do not modify the tests.
When the fix is complete, submit it by running this command on its own (you cannot continue afterwards):
echo ${MINI_SUBMIT_SENTINEL}`;

const SEED_SYSTEM =
  'You are a software engineer. Use the tools to inspect and change the repository; reply without a tool call when the task is done.';

const SEED_INSTANCE = `The repository is at {{working_dir}}. Fix this issue without modifying the tests:

{{problem_statement}}

Run commands with execute_bash and edit files with str_replace_editor. When the fix is complete, reply with a short summary and no tool call.`;

export const DEFAULT_TEMPLATES: Readonly<
  Record<ToolProfileName, { readonly system: string; readonly instance: string }>
> = {
  sweagent: { system: SWEAGENT_SYSTEM, instance: SWEAGENT_INSTANCE },
  mini_bash: { system: MINI_SYSTEM, instance: MINI_INSTANCE },
  seed: { system: SEED_SYSTEM, instance: SEED_INSTANCE },
};
