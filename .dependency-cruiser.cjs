/**
 * The layers of src/, lowest first. A folder may import only the folders listed for it (and
 * itself); anything else is an upward or sideways import and fails `npm run typecheck` and
 * test/Contract/Layers.test.ts. docs/design.md ("The layers") draws the imports that exist.
 */
const LAYERS = {
  Base: [],
  Schema: [],
  Tracing: ["Base"],
  Cancellation: ["Schema"],
  Driver: ["Base", "Schema", "Tracing"],
  Auth: ["Base", "Schema"],
  Approval: ["Auth", "Base", "Schema"],
  History: ["Base", "Schema"],
  Mcp: ["Auth", "Base", "Cancellation", "Schema", "Tracing"],
  Catalogue: ["Approval", "Auth", "Base", "Cancellation", "Driver", "History", "Mcp", "Schema", "Tracing"],
  Activity: ["Auth", "Base", "History", "Mcp", "Schema"],
  Daemon: ["Activity", "Approval", "Auth", "Base", "Cancellation", "Catalogue", "Driver", "History", "Mcp", "Schema", "Tracing"],
  Bridge: ["Activity", "Approval", "Auth", "Base", "Cancellation", "Catalogue", "Daemon", "Driver", "History", "Mcp", "Schema", "Tracing"],
  Cli: ["Activity", "Approval", "Auth", "Base", "Bridge", "Cancellation", "Catalogue", "Daemon", "Driver", "History", "Mcp", "Schema", "Tracing"]
}

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "Import cycles make the layers meaningless and the start order fragile.",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true }
    },
    ...Object.entries(LAYERS).map(([folder, allowed]) => ({
      name: `layers-${folder}`,
      comment: `src/${folder} may import only ${allowed.length === 0 ? "nothing else in src" : allowed.join(", ")}.`,
      severity: "error",
      from: { path: `^src/${folder}/` },
      to: { path: "^src/", pathNot: `^src/(${[folder, ...allowed].join("|")})/` }
    })),
    {
      name: "entry-points-on-top",
      comment: "Main, index and bin are the package's entry points: nothing in a layer imports them.",
      severity: "error",
      from: { path: "^src/[A-Za-z]+/" },
      to: { path: "^src/(Main|index|bin)\\.ts$" }
    },
    {
      name: "src-stands-alone",
      comment: "The product never reads the tests or anything outside the repository.",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^(test|bench|scripts)/|^\\.\\./" }
    }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] }
  }
}
