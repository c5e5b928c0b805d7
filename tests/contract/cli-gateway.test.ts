import { createCliGateway } from '../../src/dida/cli-gateway';
import { startSimulator } from '../../src/sim/simulator';
import { installFakeDida } from '../helpers/fake-dida-install';
import { runGatewayContract } from './gateway-contract';

runGatewayContract('dida CLI (fake dida over the simulator)', async () => {
  const sim = await startSimulator();
  const fake = await installFakeDida({ baseUrl: sim.baseUrl, token: sim.token });
  const gateway = createCliGateway({ command: fake.command, env: fake.env, readRetries: 0 });
  return {
    gateway,
    sim,
    reaches: { commentPaging: false, refusesRedirects: false },
    async cleanup() {
      await gateway.close();
      await fake.cleanup();
      await sim.close();
    },
  };
});
