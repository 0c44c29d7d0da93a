/** Parse's own classes that agents never see unless the application unhides them. */
export const BUILTIN_HIDDEN_CLASSES = [
  '_Session',
  '_Product',
  '_JobStatus',
  '_JobSchedule',
] as const;
