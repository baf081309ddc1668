/** Ports of node i (1-based) inside the cluster's namespace. */
export declare const nodePorts: (i: number) => { rest: number; grpc: number; gossip: number; data: number; raft: number; raftRpc: number }
/** Why a network namespace cannot be made here, or undefined when it can. */
export declare const namespaceUnavailable: () => string | undefined
/** The environment of node i of n. */
export declare const nodeEnv: (i: number, n: number, dataDir: string) => Record<string, string>
/** The `unshare` arguments that start the runner for n nodes with data under root. */
export declare const runnerArgs: (n: number, root: string) => Array<string>
