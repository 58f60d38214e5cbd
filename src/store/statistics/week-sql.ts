// The Monday that starts the ISO week of a day number, in SQL: src/domain/trend-interval.ts's
// weekStartDay. `%` takes the sign of the dividend on both SQLite and PostgreSQL, hence the + 7.
import { WEEK_OFFSET_DAYS } from '../../domain/trend-interval.js';

export const weekStartSql = (day: string): string => `(${day} - ((${day} + ${WEEK_OFFSET_DAYS}) % 7 + 7) % 7)`;
