/** Everything that reaches a sandbox: SWE-ReX and veFaaS clients, AgentEnv, the tool bundle, the sandbox supply. */
export {};
