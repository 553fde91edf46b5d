export * from "./client.js";
export * from "./core.js";
export * from "./errors.js";
export * from "./namespace.js";
export * from "./partial.js";
export * from "./retry.js";
export * from "./transport.js";
export * from "./wait-for.js";
