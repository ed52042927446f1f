// The names of the files a palace directory holds that code outside their owning store needs to
// know (a hook or the git guard asks "has this palace a log yet?" without opening it).

/** The coordination log's SQLite file inside a palace directory. */
export const LOGSTREAM_FILE = 'logstream.sqlite3';
