"""The built-in tools' names, categories, descriptions and argument schemas, generated from their
modules and pydantic models: do not edit.

Regenerate with ``python -m swebash_ai.docgen``; ``--check`` and a test fail when it is stale. A start
offers these tools without importing their modules (tools/__init__.py); a module whose source no longer
matches its digest in SOURCES is imported instead, and a tool whose fingerprint no longer matches its
signature gets its schema from its model (see tools/registry.py).
"""

from typing import Any

SOURCES: dict[str, str] = {'swebash_ai.tools.fs': '56f0ba0a53c561db',
 'swebash_ai.tools.fs_write': '231c07ea69866238',
 'swebash_ai.tools.search': '53ce2df72fa4672d',
 'swebash_ai.tools.find': '3726a6d8de79996d',
 'swebash_ai.tools.diagnostics': '63b9c27517bc0967',
 'swebash_ai.tools.exec': 'd76ab8bfac0393c9',
 'swebash_ai.tools.background': '765b8140deac722e',
 'swebash_ai.tools.web': '6e6f795b09bb1d74',
 'swebash_ai.tools.plan': '0bc8aad0ee2e4e3d',
 'swebash_ai.tools.ask': 'e9370f811b8fac6d'}

SCHEMAS: dict[str, dict[str, Any]] = {}

SCHEMAS['read_file'] = {'module': 'swebash_ai.tools.fs',
 'category': 'fs',
 'description': 'Read a text file, with line numbers ("  12| text"), whole or a range of lines.\n'
                '\n'
                'Files larger than the size limit (fs_max_size, 1 MiB by default) are only read by line '
                'range: ask\n'
                'for start_line/end_line. Binary files, directories, FIFOs and devices are refused. Text '
                'that is not\n'
                'valid UTF-8 is shown with U+FFFD in place of the bad bytes (noted in the answer). '
                'Credential files and\n'
                'private keys are refused; tokens and passwords in other files are shown as [masked:KIND].',
 'fingerprint': 'f67b1565bb84307b',
 'parameters': {'additionalProperties': False,
                'properties': {'path': {'description': 'File path, relative to the working directory (or '
                                                       'absolute, or starting with ~/).',
                                        'type': 'string'},
                               'start_line': {'default': 1,
                                              'description': 'First line to show, counting from 1.',
                                              'minimum': 1,
                                              'type': 'integer'},
                               'end_line': {'anyOf': [{'minimum': 1, 'type': 'integer'}, {'type': 'null'}],
                                            'default': None,
                                            'description': 'Last line to show (inclusive); omit to read to '
                                                           'the end.'}},
                'required': ['path'],
                'type': 'object'}}

SCHEMAS['list_dir'] = {'module': 'swebash_ai.tools.fs',
 'category': 'fs',
 'description': 'List a directory: "name/" for directories, "name  (size)" for files, "name -> target" for '
                'links.\n'
                '\n'
                'Recursive listings stop at max_depth and show .git, node_modules and __pycache__ without '
                'going\n'
                'into them (list them directly to see inside). At most max_entries entries are shown, '
                'shallow ones\n'
                'first, and the answer says how many were left out.',
 'fingerprint': '8e5fd36b5814b029',
 'parameters': {'additionalProperties': False,
                'properties': {'path': {'default': '.',
                                        'description': 'Directory to list, relative to the working '
                                                       'directory.',
                                        'type': 'string'},
                               'recursive': {'default': False,
                                             'description': 'Also list subdirectories, down to max_depth '
                                                            'levels.',
                                             'type': 'boolean'},
                               'max_depth': {'default': 2,
                                             'description': 'Levels to go down when recursive (1 = only this '
                                                            'directory).',
                                             'maximum': 10,
                                             'minimum': 1,
                                             'type': 'integer'},
                               'show_hidden': {'default': False,
                                               'description': 'Include names starting with a dot.',
                                               'type': 'boolean'},
                               'pattern': {'anyOf': [{'type': 'string'}, {'type': 'null'}],
                                           'default': None,
                                           'description': 'Glob on entry names, e.g. "*.py"; directories are '
                                                          'still walked when recursive.'},
                               'max_entries': {'default': 200,
                                               'description': 'Most entries to show.',
                                               'maximum': 2000,
                                               'minimum': 1,
                                               'type': 'integer'}},
                'type': 'object'}}

SCHEMAS['exists'] = {'module': 'swebash_ai.tools.fs',
 'category': 'fs',
 'description': 'Check whether a path exists, and what it is (file, directory, symlink, ...).',
 'fingerprint': '7dd30e1bfabcc22d',
 'parameters': {'additionalProperties': False,
                'properties': {'path': {'description': 'Path to check, relative to the working directory.',
                                        'type': 'string'}},
                'required': ['path'],
                'type': 'object'}}

SCHEMAS['metadata'] = {'module': 'swebash_ai.tools.fs',
 'category': 'fs',
 'description': 'Size, type, modification time, permissions and owner of a path (does not read the content).',
 'fingerprint': '2bf75997ee2f402b',
 'parameters': {'additionalProperties': False,
                'properties': {'path': {'description': 'Path to inspect, relative to the working directory.',
                                        'type': 'string'}},
                'required': ['path'],
                'type': 'object'}}

SCHEMAS['write_file'] = {'module': 'swebash_ai.tools.fs_write',
 'category': 'fs',
 'description': "Write a text file (UTF-8). Always needs the user's approval; they see the diff first.\n"
                '\n'
                'Prefer edit_file for changing part of an existing file. The result must stay under the size '
                'limit\n'
                "(fs_max_size, 1 MiB by default). The write is atomic and keeps the file's permissions. For "
                'code, the\n'
                "result lists the language server's errors and warnings of the new text (or says why it "
                'could not).',
 'fingerprint': '56cefc298e843085',
 'parameters': {'additionalProperties': False,
                'properties': {'path': {'description': 'File to write, relative to the working directory.',
                                        'type': 'string'},
                               'content': {'description': 'The full text to write (or to add, with '
                                                          'mode="append").',
                                           'type': 'string'},
                               'mode': {'default': 'overwrite',
                                        'description': '"overwrite" replaces the file, "append" adds to its '
                                                       'end, "create" fails if it exists.',
                                        'enum': ['overwrite', 'append', 'create'],
                                        'type': 'string'},
                               'create_dirs': {'default': True,
                                               'description': 'Create missing parent directories.',
                                               'type': 'boolean'}},
                'required': ['path', 'content'],
                'type': 'object'}}

SCHEMAS['edit_file'] = {'module': 'swebash_ai.tools.fs_write',
 'category': 'fs',
 'description': "Replace exact text in a file. Always needs the user's approval; they see the diff first.\n"
                '\n'
                'old must match the file exactly (whitespace and indentation included, no line-number '
                'prefixes)\n'
                'and exactly count times; otherwise nothing changes and the error says how many times it '
                'matched\n'
                'and where. Include a few surrounding lines in old to make it unique. For code, the result '
                'lists the\n'
                "language server's errors and warnings of the edited file (or says why it could not).",
 'fingerprint': '2d1f2d202087b574',
 'parameters': {'additionalProperties': False,
                'properties': {'path': {'description': 'File to edit, relative to the working directory.',
                                        'type': 'string'},
                               'old': {'description': 'The exact text to find.',
                                       'minLength': 1,
                                       'type': 'string'},
                               'new': {'description': 'The text to put in its place.', 'type': 'string'},
                               'count': {'default': 1,
                                         'description': 'How many occurrences must match (all are replaced); '
                                                        '0 replaces all, however many.',
                                         'maximum': 10000,
                                         'minimum': 0,
                                         'type': 'integer'}},
                'required': ['path', 'old', 'new'],
                'type': 'object'}}

SCHEMAS['search'] = {'module': 'swebash_ai.tools.search',
 'category': 'fs',
 'description': 'Search the contents of files under a directory (like grep -rn), grouped by file.\n'
                '\n'
                'Matching lines are shown as "  12: text", context lines as "  11- text". Skips .git, binary '
                'files,\n'
                'files over the size limit (fs_max_size) and protected files; symlinks are not followed (a '
                'file one\n'
                'points to inside the tree is found where it really is). Says how many matching lines and '
                'files there\n'
                'are in total, and when the output was cut.',
 'fingerprint': 'aeecb16b355d3063',
 'parameters': {'additionalProperties': False,
                'properties': {'pattern': {'description': 'Text to find; a Python regular expression when '
                                                          'regex is true.',
                                           'minLength': 1,
                                           'type': 'string'},
                               'path': {'default': '.',
                                        'description': 'Directory (or single file) to search, relative to '
                                                       'the working directory.',
                                        'type': 'string'},
                               'regex': {'default': False,
                                         'description': 'Treat pattern as a regular expression (Python re '
                                                        'syntax) instead of literal text.',
                                         'type': 'boolean'},
                               'case_sensitive': {'default': False,
                                                  'description': 'Match letter case exactly.',
                                                  'type': 'boolean'},
                               'include': {'anyOf': [{'items': {'type': 'string'}, 'type': 'array'},
                                                     {'type': 'null'}],
                                           'default': None,
                                           'description': 'Only search files matching one of these globs, '
                                                          'e.g. ["*.py", "src/*"] (a glob without "/" '
                                                          'matches the file name, with "/" the path relative '
                                                          'to the searched directory).'},
                               'exclude': {'anyOf': [{'items': {'type': 'string'}, 'type': 'array'},
                                                     {'type': 'null'}],
                                           'default': None,
                                           'description': 'Skip files and directories matching one of these '
                                                          'globs, e.g. ["tests", "*.min.js"].'},
                               'context_lines': {'default': 0,
                                                 'description': 'Lines of context to show before and after '
                                                                'each match.',
                                                 'maximum': 10,
                                                 'minimum': 0,
                                                 'type': 'integer'},
                               'max_results': {'default': 50,
                                               'description': 'Most matching lines to show (all are '
                                                              'counted).',
                                               'maximum': 500,
                                               'minimum': 1,
                                               'type': 'integer'}},
                'required': ['pattern'],
                'type': 'object'}}

SCHEMAS['find_files'] = {'module': 'swebash_ai.tools.find',
 'category': 'fs',
 'description': 'Find files by name with a glob pattern, newest first (sorted by modification time).\n'
                '\n'
                'A pattern without "/" matches file names at any depth ("*.py", "Dockerfile*"); with "/" it '
                'matches\n'
                'the path relative to path, "**" standing for any number of directories '
                '("src/**/test_*.py",\n'
                '"**/*.{ts,tsx}"). Skips .git, files ignored by .gitignore (unless include_ignored), '
                'symlinks leaving\n'
                'the tree and protected files. Says how many more matched beyond max_results.',
 'fingerprint': '7fad5f1254ea6829',
 'parameters': {'additionalProperties': False,
                'properties': {'pattern': {'description': 'Glob pattern: * and ? within a name, ** across '
                                                          'directories, [abc] and {a,b} alternatives.',
                                           'maxLength': 500,
                                           'minLength': 1,
                                           'type': 'string'},
                               'path': {'default': '.',
                                        'description': 'Directory to search, relative to the working '
                                                       'directory.',
                                        'type': 'string'},
                               'max_results': {'default': 200,
                                               'description': 'Most paths to list (all are counted).',
                                               'maximum': 1000,
                                               'minimum': 1,
                                               'type': 'integer'},
                               'include_ignored': {'default': False,
                                                   'description': 'Also list files that .gitignore excludes '
                                                                  '(build output, node_modules...).',
                                                   'type': 'boolean'}},
                'required': ['pattern'],
                'type': 'object'}}

SCHEMAS['diagnostics'] = {'module': 'swebash_ai.tools.diagnostics',
 'category': 'fs',
 'description': 'Language-server diagnostics (errors and warnings) of a file, or of every file checked so '
                'far.\n'
                '\n'
                "Edits already report their file's diagnostics; call this to check a file you did not edit, "
                'or to see\n'
                "all problems found in the project so far. It changes nothing (the file's language server "
                'starts if it\n'
                'is not running, in the sandbox).',
 'fingerprint': 'ae3c197c54ac89db',
 'parameters': {'additionalProperties': False,
                'properties': {'path': {'default': '',
                                        'description': 'A file to check now (relative to the working '
                                                       'directory); empty: every file the running language '
                                                       'servers have reported on.',
                                        'type': 'string'}},
                'type': 'object'}}

SCHEMAS['run_command'] = {'module': 'swebash_ai.tools.exec',
 'category': 'exec',
 'description': 'Run a bash command and return its exit code, stdout and stderr.\n'
                '\n'
                'It runs without a terminal or input (nothing can prompt; pagers and colours are off), so '
                'use\n'
                'non-interactive flags (`git --no-pager`, `apt-get -y`). Long output is cut in the middle. '
                'At the timeout\n'
                'the command and everything it started are killed, and what it leaves running (`cmd &`) is '
                'stopped when\n'
                'it ends. For a server or watcher that must keep running, pass background=true instead: the '
                'call returns\n'
                'at once with `process id: <ID>` and the first output; then use read_process and '
                'stop_process.',
 'fingerprint': 'c062bc44ba12d19b',
 'parameters': {'additionalProperties': False,
                'properties': {'command': {'description': 'The bash command line, e.g. `ls -la src` or '
                                                          '`python -m pytest -q tests/test_x.py`.',
                                           'type': 'string'},
                               'timeout': {'anyOf': [{'maximum': 300, 'minimum': 1, 'type': 'integer'},
                                                     {'type': 'null'}],
                                           'default': None,
                                           'description': 'Seconds before the command is killed (default '
                                                          'from the settings, at most 300; not with '
                                                          'background).'},
                               'cwd': {'anyOf': [{'type': 'string'}, {'type': 'null'}],
                                       'default': None,
                                       'description': 'Directory to run in, relative to the current '
                                                      'directory (default: the current directory).'},
                               'background': {'default': False,
                                              'description': 'Start it in the background (a dev server, a '
                                                             'watcher) and return at once; it runs until '
                                                             'stop_process or the end of the session.',
                                              'type': 'boolean'},
                               'sandbox': {'default': True,
                                           'description': 'Leave true. Commands run in an OS sandbox (the '
                                                          'workspace writable; the system and toolchains '
                                                          'read-only; the rest of home, other projects and '
                                                          'sockets absent; /tmp private; no network but '
                                                          'allowed hosts). Only when a result says the '
                                                          'sandbox blocked something the task really needs, '
                                                          'call again with false: the user is asked, shown '
                                                          'why, and may allow it outside or refuse; without '
                                                          'a user it is refused.',
                                           'type': 'boolean'}},
                'required': ['command'],
                'type': 'object'}}

SCHEMAS['read_process'] = {'module': 'swebash_ai.tools.background',
 'category': 'exec',
 'description': 'Read what a background process (started with run_command(background=true)) printed since '
                'the last read.\n'
                '\n'
                'Returns its state (running, or exited with its code and how long it ran) and its new output '
                '(stdout and\n'
                'stderr together).\n'
                'Only the last part of a flood of output is kept; the result says how much was dropped.',
 'fingerprint': '6944414566686fb2',
 'parameters': {'additionalProperties': False,
                'properties': {'id': {'description': 'The process id run_command returned, e.g. `p1`.',
                                      'type': 'string'},
                               'wait_seconds': {'default': 0,
                                                'description': 'Wait up to this many seconds for new output '
                                                               'or the exit (0: answer at once; at most 60).',
                                                'maximum': 60,
                                                'minimum': 0,
                                                'type': 'number'}},
                'required': ['id'],
                'type': 'object'}}

SCHEMAS['stop_process'] = {'module': 'swebash_ai.tools.background',
 'category': 'exec',
 'description': 'Stop a background process and everything it started (SIGTERM, then SIGKILL after a short '
                'grace).',
 'fingerprint': '941e4e3ecc5daa7e',
 'parameters': {'additionalProperties': False,
                'properties': {'id': {'description': 'The process id run_command returned, e.g. `p1`.',
                                      'type': 'string'}},
                'required': ['id'],
                'type': 'object'}}

SCHEMAS['web_search'] = {'module': 'swebash_ai.tools.web',
 'category': 'web',
 'description': 'Search the web (DuckDuckGo) and get back titles, URLs and snippets.\n'
                '\n'
                'Use it for facts that may have changed or that you do not know; read a result with '
                'fetch_url.',
 'fingerprint': 'f0e1562caf1bcebb',
 'parameters': {'additionalProperties': False,
                'properties': {'query': {'description': 'What to search for, as you would type it in a '
                                                        'search box (at most 500 characters).',
                                         'maxLength': 500,
                                         'minLength': 1,
                                         'type': 'string'},
                               'num_results': {'default': 5,
                                               'description': 'How many results to return (1-10).',
                                               'maximum': 10,
                                               'minimum': 1,
                                               'type': 'integer'}},
                'required': ['query'],
                'type': 'object'}}

SCHEMAS['fetch_url'] = {'module': 'swebash_ai.tools.web',
 'category': 'web',
 'description': 'Download a web page (http or https) and return its readable text.\n'
                '\n'
                'HTML is reduced to text (headings as # lines, links as "text (url)"); plain text, JSON and '
                'Markdown\n'
                'come back as they are; binary files (images, PDFs, archives) are refused. A URL the user '
                'gave, a search\n'
                'result or a link on a fetched page runs at once; any other URL (or added query parameters) '
                'needs the\n'
                "user's approval, so use such URLs as they are.",
 'fingerprint': '661af19e68c89e25',
 'parameters': {'additionalProperties': False,
                'properties': {'url': {'description': 'The full http:// or https:// URL to fetch.',
                                       'maxLength': 2000,
                                       'minLength': 1,
                                       'type': 'string'},
                               'max_chars': {'default': 20000,
                                             'description': 'The most characters of text to return '
                                                            '(100-200000); longer pages are cut with a note.',
                                             'maximum': 200000,
                                             'minimum': 100,
                                             'type': 'integer'}},
                'required': ['url'],
                'type': 'object'}}

SCHEMAS['update_plan'] = {'module': 'swebash_ai.tools.plan',
 'category': 'plan',
 'description': 'Set the plan of a multi-step task, shown to the user as a checklist; call again as steps '
                'progress.\n'
                '\n'
                'Send the whole plan each time: every step with its status. Keep exactly one step '
                'in_progress while\n'
                'working, mark steps completed as soon as they are done. Do not use it for a one-step '
                'request.',
 'fingerprint': '8c59eb96af916140',
 'parameters': {'additionalProperties': False,
                'properties': {'plan': {'description': 'The steps in order, each {"step": "...", "status": '
                                                       '"pending", "in_progress" or "completed"}.',
                                        'items': {'additionalProperties': False,
                                                  'description': 'One step of the plan.',
                                                  'properties': {'step': {'description': 'What to do, in a '
                                                                                         'few words.',
                                                                          'maxLength': 300,
                                                                          'minLength': 1,
                                                                          'type': 'string'},
                                                                 'status': {'description': 'pending, '
                                                                                           'in_progress (at '
                                                                                           'most one step) '
                                                                                           'or completed.',
                                                                            'enum': ['pending',
                                                                                     'in_progress',
                                                                                     'completed'],
                                                                            'type': 'string'}},
                                                  'required': ['step', 'status'],
                                                  'type': 'object'},
                                        'maxItems': 50,
                                        'type': 'array'},
                               'explanation': {'anyOf': [{'maxLength': 1000, 'type': 'string'},
                                                         {'type': 'null'}],
                                               'default': None,
                                               'description': 'Why the plan changed, in one sentence '
                                                              '(optional).'}},
                'required': ['plan'],
                'type': 'object'}}

SCHEMAS['ask_user'] = {'module': 'swebash_ai.tools.ask',
 'category': 'ask',
 'description': 'Ask the user a question and wait for the answer, e.g. to choose between approaches.\n'
                '\n'
                "Use it only when a decision that is the user's to make blocks the task; otherwise make a "
                'sensible\n'
                'choice and say which. Offer short options when the choice is among known alternatives.',
 'fingerprint': '17a987ee0be0a727',
 'parameters': {'additionalProperties': False,
                'properties': {'question': {'description': 'The question, in one or two sentences.',
                                            'maxLength': 2000,
                                            'minLength': 1,
                                            'type': 'string'},
                               'options': {'anyOf': [{'items': {'maxLength': 200,
                                                                'minLength': 1,
                                                                'type': 'string'},
                                                      'maxItems': 9,
                                                      'type': 'array'},
                                                     {'type': 'null'}],
                                           'default': None,
                                           'description': 'Up to 9 short answers the user can pick (keys '
                                                          '1-9).'},
                               'allow_free_text': {'default': True,
                                                   'description': 'Whether the user may type an answer of '
                                                                  'their own instead of picking an option.',
                                                   'type': 'boolean'}},
                'required': ['question'],
                'type': 'object'}}
