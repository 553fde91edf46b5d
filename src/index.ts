export * from "./api/index.js";
