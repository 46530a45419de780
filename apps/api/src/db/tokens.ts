/** Injection tokens for the values the app is built around. */
export const DATABASE = Symbol('DATABASE');
export const CONFIG = Symbol('CONFIG');
export const SECRET_BOX = Symbol('SECRET_BOX');
