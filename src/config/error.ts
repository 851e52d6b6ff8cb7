// A setting authd cannot use: start-up stops with its message, one line naming the setting.
export class ConfigError extends Error {}
