// A line protocol over libquackle for benchmarks/scrabble_external.py (issue 37).
//
// This file is meeple's own code: it holds no Quackle source, only calls into
// libquackle's public headers. It is compiled outside the repository against a
// Quackle build (see the driver's `build` step and docs/scrabble-engine.md):
//
//   g++ -O2 -std=c++17 -I<quackle> quackle_bridge.cpp
//       <quackle>/build/libquackle/libquackle.a -lpthread -o quackle_bridge
//
//   quackle_bridge --data <quackle>/data --dawg enable.dawg --gaddag enable.gaddag
//                  --strategy enable --player speedy|championship
//                  [--seconds N] [--cpu-limit S] [--seed N]
//
// The bridge keeps a Quackle Game in step with the referee's: every play, exchange
// and pass of either side is committed to it, and before each "go" the referee
// gives the bridge its rack and checks that Quackle's bag count, unseen tiles and
// scores are its own. The opponent's rack is never told: Quackle keeps the
// opponent's rack and the bag as one pool of unseen tiles (what its simulation
// draws from), and only the tiles a play uses are moved onto the opponent's rack
// before that play is committed.
//
// Commands, one a line; each gets one reply line, "ok ..." or "err <why>":
//   layout <size> <centre row> <centre col> <rows joined by '/'>
//          squares: '.' plain, 'l' double letter, 'L' triple letter,
//          'w' double word, 'W' triple word (meeple's Layout.from_rows codes)
//   new <first>          a new game; seat 0 is the bridge, seat <first> starts
//   rack <tiles>|-       the bridge's rack ('?' for a blank)
//   play <row> <col> <h|v> <word>   the player on turn plays the whole word
//          (letters on the board included, blanks in lower case) -> "ok <score>"
//   exchange <tiles>     the bridge exchanges these tiles
//   exchange <n>         the opponent exchanges n tiles (unseen)
//   pass                 the player on turn passes
//   check <bag> <unseen>|- <score 0> <score 1>   compare with Quackle's game
//   go                   the bridge's choice, not committed:
//          "ok play <row> <col> <h|v> <word> <score> <cpu>",
//          "ok exchange <tiles> <cpu>" or "ok pass <cpu>" (cpu: process CPU seconds)
//   quit
//
// Quackle writes its own chatter to standard output; the bridge moves that to
// standard error and answers on the original standard output.

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "alphabetparameters.h"
#include "bag.h"
#include "board.h"
#include "boardparameters.h"
#include "computerplayer.h"
#include "datamanager.h"
#include "endgameplayer.h"
#include "game.h"
#include "gameparameters.h"
#include "lexiconparameters.h"
#include "move.h"
#include "player.h"
#include "rack.h"
#include "resolvent.h"
#include "strategyparameters.h"

namespace
{

const size_t MAX_LINE = 4096;

double cpuSeconds()
{
	timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

// Stops a search once the process has used `limit` CPU seconds since start().
class CpuDispatch : public Quackle::ComputerDispatch
{
public:
	explicit CpuDispatch(double limit) : m_limit(limit), m_start(0) {}
	void start() { m_start = cpuSeconds(); }
	bool shouldAbort() override { return m_limit > 0 && cpuSeconds() - m_start >= m_limit; }
	void signalFractionDone(double) override {}

private:
	double m_limit;
	double m_start;
};

struct Options
{
	std::string data = ".";
	std::string dawg;
	std::string gaddag;
	std::string strategy = "enable";
	std::string player = "speedy";
	int seconds = 1;
	double cpuLimit = 0;
	unsigned seed = 1;
};

std::string upper(std::string s)
{
	for (auto &c : s)
		c = char(toupper(static_cast<unsigned char>(c)));
	return s;
}

class Bridge
{
public:
	Bridge(const Options &options, FILE *out) : m_options(options), m_out(out), m_dispatch(options.cpuLimit) {}

	bool setUp(std::string &why)
	{
		m_data.setAppDataDirectory(m_options.data);
		m_data.setUserDataDirectory(m_options.data);
		m_data.setBackupLexicon("default_english");
		m_data.seedRandomNumbers(m_options.seed);
		m_data.lexiconParameters()->loadDawg(m_options.dawg);
		m_data.lexiconParameters()->loadGaddag(m_options.gaddag);
		if (!m_data.lexiconParameters()->hasDawg() || !m_data.lexiconParameters()->hasGaddag())
		{
			why = "cannot load the dawg or the gaddag";
			return false;
		}
		m_data.strategyParameters()->initialize(m_options.strategy);
		if (m_options.player == "speedy")
			m_player.reset(new Quackle::EndgamePlayer);
		else if (m_options.player == "championship")
			m_player.reset(new Quackle::TorontoPlayer);
		else
		{
			why = "no such player: " + m_options.player;
			return false;
		}
		Quackle::ComputerParameters parameters = m_player->parameters();
		parameters.secondsPerTurn = m_options.seconds;
		m_player->setParameters(parameters);
		m_player->setDispatch(&m_dispatch);
		return true;
	}

	// The strategy files found (those Quackle falls back on included).
	std::string strategyReport()
	{
		const Quackle::StrategyParameters *s = m_data.strategyParameters();
		std::ostringstream o;
		o << "syn2=" << s->hasSyn2() << " worths=" << s->hasWorths() << " vcplace=" << s->hasVcPlace()
		  << " bogowin=" << s->hasBogowin() << " superleaves=" << s->hasSuperleaves();
		return o.str();
	}

	void reply(const std::string &line)
	{
		fputs(line.c_str(), m_out);
		fputc('\n', m_out);
		fflush(m_out);
	}

	// Returns false on "quit".
	bool handle(const std::string &line)
	{
		std::istringstream in(line);
		std::string command;
		in >> command;
		std::vector<std::string> args;
		for (std::string a; in >> a;)
			args.push_back(a);
		std::string why;
		std::string answer;
		bool ok = false;
		if (command == "quit")
		{
			reply("ok bye");
			return false;
		}
		else if (command == "layout")
			ok = layout(args, why);
		else if (command == "new")
			ok = newGame(args, why);
		else if (!m_started)
			why = "no game: send new first";
		else if (command == "rack")
			ok = rack(args, why);
		else if (command == "play")
			ok = play(args, why, answer);
		else if (command == "exchange")
			ok = exchange(args, why);
		else if (command == "pass")
			ok = commit(Quackle::Move::createPassMove(), why);
		else if (command == "check")
			ok = check(args, why);
		else if (command == "go")
			ok = go(why, answer);
		else
			why = "unknown command " + command;
		reply(ok ? (answer.empty() ? std::string("ok") : "ok " + answer) : "err " + why);
		return true;
	}

private:
	Quackle::GamePosition &position() { return m_game.currentPosition(); }

	bool layout(const std::vector<std::string> &args, std::string &why)
	{
		if (args.size() != 4)
		{
			why = "layout <size> <centre row> <centre col> <rows>";
			return false;
		}
		const int size = atoi(args[0].c_str());
		if (size < 3 || size > QUACKLE_MAXIMUM_BOARD_SIZE)
		{
			why = "bad board size";
			return false;
		}
		std::vector<std::string> rows;
		std::string row;
		std::istringstream in(args[3]);
		while (std::getline(in, row, '/'))
			rows.push_back(row);
		if (int(rows.size()) != size)
		{
			why = "wrong number of rows";
			return false;
		}
		auto *board = new Quackle::BoardParameters;
		board->setWidth(size);
		board->setHeight(size);
		board->setStartRow(atoi(args[1].c_str()));
		board->setStartColumn(atoi(args[2].c_str()));
		for (int r = 0; r < size; ++r)
		{
			if (int(rows[r].size()) != size)
			{
				delete board;
				why = "wrong row length";
				return false;
			}
			for (int c = 0; c < size; ++c)
			{
				auto lm = Quackle::BoardParameters::sls;
				auto wm = Quackle::BoardParameters::sws;
				switch (rows[r][c])
				{
				case 'l': lm = Quackle::BoardParameters::dls; break;
				case 'L': lm = Quackle::BoardParameters::tls; break;
				case 'w': wm = Quackle::BoardParameters::dws; break;
				case 'W': wm = Quackle::BoardParameters::tws; break;
				case '.': break;
				default:
					delete board;
					why = "bad square code";
					return false;
				}
				board->setLetterMultiplier(r, c, lm);
				board->setWordMultiplier(r, c, wm);
			}
		}
		m_data.setBoardParameters(board);
		return true;
	}

	bool newGame(const std::vector<std::string> &args, std::string &why)
	{
		if (args.size() != 1 || (args[0] != "0" && args[0] != "1"))
		{
			why = "new <0|1>";
			return false;
		}
		const int first = atoi(args[0].c_str());
		m_bridgeId = first == 0 ? 0 : 1;  // Quackle's ids follow the order of play
		Quackle::PlayerList players;
		for (int i = 0; i < 2; ++i)
		{
			const bool bridge = i == m_bridgeId;
			players.push_back(Quackle::Player(bridge ? "quackle" : "opponent", Quackle::Player::HumanPlayerType, i));
		}
		m_game.reset();
		m_game.setPlayers(players);
		m_game.addPosition();
		m_started = true;
		return true;
	}

	bool encodeRack(const std::string &text, Quackle::Rack &rack, std::string &why)
	{
		if (text == "-")
		{
			rack = Quackle::Rack();
			return true;
		}
		std::string leftover;
		Quackle::LetterString tiles = QUACKLE_ALPHABET_PARAMETERS->encode(upper(text), &leftover);
		if (!leftover.empty() || tiles.length() != text.size())
		{
			why = "cannot read tiles " + text;
			return false;
		}
		rack = Quackle::Rack(tiles);
		return true;
	}

	bool rack(const std::vector<std::string> &args, std::string &why)
	{
		if (args.size() != 1)
		{
			why = "rack <tiles>";
			return false;
		}
		Quackle::Rack rack;
		if (!encodeRack(args[0], rack, why))
			return false;
		position().setPlayerRack(m_bridgeId, rack, true);
		if (!rackOf(m_bridgeId).equals(rack))
		{
			why = "these tiles are not unseen to Quackle";
			return false;
		}
		return true;
	}

	Quackle::Rack rackOf(int id)
	{
		for (const auto &p : position().players())
			if (p.id() == id)
				return p.rack();
		return Quackle::Rack();
	}

	bool play(const std::vector<std::string> &args, std::string &why, std::string &answer)
	{
		if (args.size() != 4 || (args[2] != "h" && args[2] != "v"))
		{
			why = "play <row> <col> <h|v> <word>";
			return false;
		}
		std::string leftover;
		// Lower case is a blank (the alphabet's blank text); upper case a tile.
		Quackle::LetterString word = QUACKLE_ALPHABET_PARAMETERS->encode(args[3], &leftover);
		if (!leftover.empty() || word.length() != args[3].size())
		{
			why = "cannot read word " + args[3];
			return false;
		}
		Quackle::Move move = Quackle::Move::createPlaceMove(atoi(args[0].c_str()), atoi(args[1].c_str()), args[2] == "h", word);
		position().ensureMovePrettiness(move);
		position().ensureMoveTilesDoNotIncludePlayThru(move);
		move.score = position().calculateScore(move);
		if (position().currentPlayer().id() != m_bridgeId)
			giveOpponent(move.usedTiles());
		Quackle::Rack rack = position().currentPlayer().rack();
		if (!rack.unload(move.usedTiles()))
		{
			why = "the player on turn does not hold the tiles";
			return false;
		}
		answer = std::to_string(move.score);
		return commit(move, why);
	}

	// Before the opponent's play or exchange: its rack in Quackle's game must hold
	// the tiles it uses. The rest of its rack stays; the tiles it had that the play
	// does not use go back to the pool of unseen tiles.
	void giveOpponent(const Quackle::LetterString &used)
	{
		const int opp = position().currentPlayer().id();
		Quackle::Rack current = rackOf(opp);
		Quackle::LetterString usedRack;
		for (auto letter : used)
			usedRack += QUACKLE_ALPHABET_PARAMETERS->isBlankLetter(letter) ? Quackle::Letter(QUACKLE_BLANK_MARK) : letter;
		Quackle::Rack keep = current;
		keep.unload(usedRack);  // false when some used tiles were not on it: fine
		Quackle::Rack wanted(usedRack);
		Quackle::LetterString rest = keep.tiles();
		const size_t size = std::max(current.tiles().length(), usedRack.length());
		for (size_t i = 0; wanted.tiles().length() < size && i < rest.length(); ++i)
			wanted.load(rest.substr(i, 1));
		position().setPlayerRack(opp, wanted, true);
	}

	bool exchange(const std::vector<std::string> &args, std::string &why)
	{
		if (args.size() != 1)
		{
			why = "exchange <tiles>|<n>";
			return false;
		}
		if (position().currentPlayer().id() == m_bridgeId)
		{
			Quackle::Rack tiles;
			if (!encodeRack(args[0], tiles, why))
				return false;
			Quackle::Rack rack = position().currentPlayer().rack();
			if (!rack.unload(tiles.tiles()))
			{
				why = "the bridge does not hold the tiles";
				return false;
			}
			return commit(Quackle::Move::createExchangeMove(tiles.tiles(), false), why);
		}
		const int n = atoi(args[0].c_str());
		if (n < 1 || n > QUACKLE_PARAMETERS->rackSize())
		{
			why = "bad exchange count";
			return false;
		}
		// The opponent's tiles are unseen: an exchange of n of the tiles Quackle has
		// on its rack changes nothing of what the bridge can know.
		Quackle::LetterString tiles = rackOf(position().currentPlayer().id()).tiles().substr(0, n);
		return commit(Quackle::Move::createExchangeMove(tiles, false), why);
	}

	bool commit(const Quackle::Move &move, std::string &why)
	{
		if (position().gameOver())
		{
			why = "the game is over";
			return false;
		}
		m_game.commitMove(move);
		return true;
	}

	bool check(const std::vector<std::string> &args, std::string &why)
	{
		if (args.size() != 4)
		{
			why = "check <bag> <unseen> <score 0> <score 1>";
			return false;
		}
		std::ostringstream o;
		const int bag = position().bag().size();
		if (bag != atoi(args[0].c_str()))
			o << " bag " << bag << " not " << args[0] << ";";
		// Up to 93 tiles: compared letter by letter (a LetterString holds 40 at most).
		Quackle::LongLetterString want;
		if (args[1] != "-")
			for (char c : args[1])
			{
				std::string leftover;
				Quackle::LetterString one = QUACKLE_ALPHABET_PARAMETERS->encode(upper(std::string(1, c)), &leftover);
				if (!leftover.empty() || one.length() != 1)
				{
					why = "cannot read tiles " + args[1];
					return false;
				}
				want += one[0];
			}
		Quackle::LongLetterString have = position().unseenBagFromPlayerPerspective(playerOf(m_bridgeId)).tiles();
		std::sort(want.begin(), want.end());
		std::sort(have.begin(), have.end());
		if (have != want)
			o << " unseen " << have.size() << " tiles not the " << want.size() << " given;";
		for (int seat = 0; seat < 2; ++seat)
		{
			const int id = seat == 0 ? m_bridgeId : 1 - m_bridgeId;
			const int score = playerOf(id).score();
			if (score != atoi(args[2 + seat].c_str()))
				o << " score " << seat << " " << score << " not " << args[2 + seat] << ";";
		}
		why = o.str();
		if (!why.empty())
			why = "mismatch:" + why;
		return why.empty();
	}

	const Quackle::Player &playerOf(int id)
	{
		for (const auto &p : position().players())
			if (p.id() == id)
				return p;
		return position().currentPlayer();
	}

	bool go(std::string &why, std::string &answer)
	{
		if (position().gameOver())
		{
			why = "the game is over";
			return false;
		}
		if (position().currentPlayer().id() != m_bridgeId)
		{
			why = "not the bridge's turn";
			return false;
		}
		const double start = cpuSeconds();
		m_dispatch.start();
		m_player->setPosition(position());
		Quackle::Move move = m_player->move();
		const double cpu = cpuSeconds() - start;
		std::ostringstream o;
		if (move.action == Quackle::Move::Place)
		{
			Quackle::LetterString word = position().board().prettyTilesOfMove(move, false);
			o << "play " << move.startrow << " " << move.startcol << " " << (move.horizontal ? "h" : "v") << " "
			  << QUACKLE_ALPHABET_PARAMETERS->userVisible(word) << " " << move.score;
		}
		else if (move.action == Quackle::Move::Exchange)
			o << "exchange " << QUACKLE_ALPHABET_PARAMETERS->userVisible(move.tiles());
		else if (move.action == Quackle::Move::Pass)
			o << "pass";
		else
		{
			why = "Quackle chose no move";
			return false;
		}
		char buffer[32];
		snprintf(buffer, sizeof buffer, " %.6f", cpu);
		o << buffer;
		answer = o.str();
		return true;
	}

	Options m_options;
	FILE *m_out;
	CpuDispatch m_dispatch;
	Quackle::DataManager m_data;
	std::unique_ptr<Quackle::ComputerPlayer> m_player;
	Quackle::Game m_game;
	int m_bridgeId = 0;
	bool m_started = false;
};

}  // namespace

int main(int argc, char **argv)
{
	Options options;
	for (int i = 1; i + 1 < argc; i += 2)
	{
		const std::string key = argv[i];
		const std::string value = argv[i + 1];
		if (key == "--data")
			options.data = value;
		else if (key == "--dawg")
			options.dawg = value;
		else if (key == "--gaddag")
			options.gaddag = value;
		else if (key == "--strategy")
			options.strategy = value;
		else if (key == "--player")
			options.player = value;
		else if (key == "--seconds")
			options.seconds = atoi(value.c_str());
		else if (key == "--cpu-limit")
			options.cpuLimit = atof(value.c_str());
		else if (key == "--seed")
			options.seed = unsigned(strtoul(value.c_str(), nullptr, 10));
		else
		{
			fprintf(stderr, "unknown option %s\n", key.c_str());
			return 2;
		}
	}
	// Answers go to the original standard output; Quackle's chatter to stderr.
	const int protocolFd = dup(1);
	dup2(2, 1);
	FILE *out = fdopen(protocolFd, "w");
	if (!out)
		return 2;
	Bridge bridge(options, out);
	std::string why;
	if (!bridge.setUp(why))
	{
		bridge.reply("err " + why);
		return 1;
	}
	bridge.reply("ok quackle-bridge " + options.player + " " + bridge.strategyReport());
	std::string line;
	while (std::getline(std::cin, line))
	{
		if (line.size() > MAX_LINE)
		{
			bridge.reply("err line too long");
			continue;
		}
		if (!line.empty() && line.back() == '\r')
			line.pop_back();
		if (line.empty())
			continue;
		if (!bridge.handle(line))
			break;
	}
	return 0;
}
