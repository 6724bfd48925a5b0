/** Test and demo kits (never imported by shipped code). */
export {};
